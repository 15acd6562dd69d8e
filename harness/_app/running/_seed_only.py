"""Generation that depends on the run's seed and nothing else.

Hypothesis (since 6.131) sometimes draws a constant it found in the source of any *local* module already
imported: the summarizer under test, its helpers, whatever the process loaded before. A run's sessions
then depended on which modules happened to be imported, so ``--seed 3`` meant one set of sessions under
the CLI, another under pytest after other tests, another for the next summarizer, and a finding could
not always be reproduced from its printed command. While the harness generates, Hypothesis is shown no
local constants (its fixed global ones, the same everywhere, stay).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from hypothesis.internal.conjecture import providers as _providers

__all__ = ["seed_only"]

_lock = threading.Lock()
_depth = 0
_saved = None


def _clear_constant_cache() -> None:
    """Hypothesis caches the constants allowed per kind of draw, local ones included: drop them."""
    cache = getattr(_providers, "CONSTANTS_CACHE", None)
    if cache is not None:
        cache.cache.clear()


@contextlib.contextmanager
def seed_only() -> Iterator[None]:
    """Within this block (reentrant, and shared by threads generating at once) Hypothesis draws no
    constant from the modules this process imported. Nothing is changed on a Hypothesis without them."""
    global _depth, _saved
    original = getattr(_providers, "_get_local_constants", None)
    if original is None:
        yield
        return
    with _lock:
        if _depth == 0:
            _saved = original
            empty = type(_providers._local_constants)()
            _providers._get_local_constants = lambda: empty
            _clear_constant_cache()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _providers._get_local_constants = _saved
                _saved = None
                _clear_constant_cache()
