#!/usr/bin/env python3
"""Run one fuzz target under atheris: ``fuzz/targets.py TARGET [libFuzzer options...] [CORPUS_DIR...]``.

TARGET is one of transcript, corpus_entry, result, wire (see ``fuzz/README.md``). The harness,
strategies and oracles are imported instrumented, so libFuzzer's coverage guides the search;
Hypothesis and Faker are imported first, uninstrumented, to keep executions cheap.
``fuzz/json.dict`` is passed as ``-dict=`` unless one is given.

libFuzzer re-executes ``argv[0]`` for ``-fork`` and ``-merge=1`` with the options it was given:
the target travels as ``--target=NAME`` (libFuzzer passes ``--`` options through untouched).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

NAMES = ("transcript", "corpus_entry", "result", "wire")


def _split(argv: list[str]) -> tuple[str | None, list[str]]:
    """The target's name and the options for libFuzzer (with ``--target=NAME`` among them)."""
    rest = argv[1:]
    if rest and rest[0] in NAMES:
        rest = [f"--target={rest[0]}", *rest[1:]]
    name = next((a.removeprefix("--target=") for a in rest if a.startswith("--target=")), None)
    if not any(a.startswith("-dict=") for a in rest):
        rest.append(f"-dict={HERE / 'json.dict'}")
    return (name if name in NAMES else None), [argv[0], *rest]


def main() -> int:
    name, args = _split(sys.argv)
    if name is None:
        print(f"usage: {sys.argv[0]} TARGET [libFuzzer options...] [CORPUS_DIR...]\n"
              f"TARGET: {', '.join(NAMES)}", file=sys.stderr)
        return 2
    import atheris
    import faker  # noqa: F401  (imported by strategies; uninstrumented, it stays fast)
    import hypothesis  # noqa: F401

    with atheris.instrument_imports(include=["harness"]):
        import harness  # noqa: F401
        from harness import oracles  # noqa: F401
        from harness import strategies  # noqa: F401
        from fuzz import _targets

    atheris.Setup(args, _targets.runner(name))  # with the recursion headroom the tests replay with
    _targets.prepare(name)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
