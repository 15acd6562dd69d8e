"""What a test of a subprocess may assert about its output."""

import re

_CRASH = re.compile(r"^Traceback \(most recent call last\):$", re.M)


def harness_crashed(output: str) -> bool:
    """Whether ``output`` holds a Python traceback of the harness itself: one that starts a line.

    Generated filler holds stack traces too (a coding agent's tool output), and a report shows
    them inside a turn's line, never at the start of one.
    """
    return _CRASH.search(output) is not None
