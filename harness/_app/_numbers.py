"""The checks of numeric options, defined once for the command line and the pytest plugin.

Each reads an option's text and returns its value, or raises ``ValueError`` with a message naming the
option and what was expected; ``argparse`` and pytest each turn it into their own usage error. Only the
standard library, so the plugin (loaded in every pytest session) can import it at once.
"""

from __future__ import annotations

import math

__all__ = ["MAX_SECONDS", "whole_number", "positive_number", "share"]

#: The longest a timeout or a run's time may be: a month of seconds.
MAX_SECONDS = 30 * 24 * 3600.0


def whole_number(option: str, text: str, minimum: int = 1) -> int:
    """A whole number of at least ``minimum``."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{option} expects a whole number, got {text!r}") from None
    if value < minimum:
        raise ValueError(f"{option} expects a number >= {minimum}, got {value}")
    return value


def positive_number(option: str, text: str, maximum: float = MAX_SECONDS) -> float:
    """A positive, finite number of at most ``maximum``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{option} expects a number, got {text!r}") from None
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{option} expects a finite number > 0, got {text}")
    if value > maximum:
        raise ValueError(f"{option} expects a number <= {maximum:g}, got {text}")
    return value


def share(option: str, text: str) -> float:
    """A share in (0, 1], or a percentage such as 90%."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ValueError(f"{option} expects a share such as 0.9 or 90%, got {text!r}") from None
    if not 0 < value <= 1:
        raise ValueError(f"{option} expects a share in (0, 1] (or 1% to 100%), got {text}")
    return value
