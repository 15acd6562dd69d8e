"""``compaction-harness init``: a starting point for a new team (a summarizer wrapper, a pytest test using the
plugin, a corpus directory and a CI workflow), each runnable at once.

The command's parser and its function; ``_parser`` and ``_commands`` only register them.
"""

from __future__ import annotations

import argparse

from harness._app._outcome import ExitCode
from harness._base._errors import InvalidArgument

__all__ = ["add_init_arguments", "init_command"]


def add_init_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``init`` command's options."""
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR",
                        help="where to write the starter files (default: the current directory)")
    parser.set_defaults(extend=[], rules=None)


def init_command(args, outputs) -> ExitCode:
    """Write the starter files into ``args.directory``."""
    raise InvalidArgument("init is being written (issue 49)")
