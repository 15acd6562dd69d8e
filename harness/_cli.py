"""The ``compaction-harness`` command line: a thin layer over the library."""

from __future__ import annotations

import argparse
import sys

from harness import __version__
from harness._errors import HarnessError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaction-harness",
        description="Property-based and fuzz testing for transcript compactors (summarizers).",
    )
    parser.add_argument("--version", action="version", version=f"compaction-harness {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
    except HarnessError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
