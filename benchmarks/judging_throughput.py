#!/usr/bin/env python3
"""Judging throughput on realistic contexts: milliseconds for one ``harness.oracles.check`` pass.

Issue 12's target is at most 20 ms for a 180k-token context. A generated transcript (fixed seed) is
turned into contexts of about 10k, 100k and 1M characters, and one of 180k tokens, in the shapes a
compactor returns:

- ``verbatim``: the window's own messages kept as they are (a tail or identity compactor);
- ``summary+tail``: a Markdown summary of the older half (about 4k tokens, quoting in full the turns
  that state an obligation, as a correct summary keeps them), then the newer half verbatim (what an
  LLM compactor with a kept tail returns: the common shape of a large context);
- ``rewritten``: the whole window's text in one system message, nothing verbatim (worst case);
- ``markdown``: one bullet per message under headings, in one message (worst case too).

Each is judged ``cold`` (every cache of what was read emptied first, compiled patterns kept: text
no oracle has read, in a process that has judged before; the window's turns counted as the session
runner counts them before it compacts, because it must to know when to compact) and as the ``next
round`` of a session (the previous round's context, the same shape over a window 5% shorter, was
judged first: what each compaction of a session and each shrinking check costs). ``violations`` says how many
the oracles found: a summary or a rewrite holds the calls still in flight in its part of the window
only as text, so handle-retained fails there; otherwise every row takes the passing path. Beside the milliseconds:
the time as a multiple of one regex scan of the same text (``\\w+|[^\\w\\s]``, measured in the same
run), so machines compare. Asserts nothing; run by hand::

    python benchmarks/judging_throughput.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import gc
import re
import statistics
import sys
import time

from hypothesis import HealthCheck, Phase, given, settings

from harness import CompactionResult, Role, Turn
from harness._base._tokens import context_tokens, message_tokens
from harness.oracles import Case, _context, _invented, check
from harness.strategies import transcripts

SIZES = (10_000, 100_000, 1_000_000)
TARGET_TOKENS = 180_000


def _transcript(turns: int):
    got = []

    @settings(max_examples=1, database=None, phases=[Phase.generate], derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(transcripts(min_turns=turns, max_turns=turns, min_facts=8, max_facts=12))
    def grab(transcript) -> None:
        got.append(transcript)

    grab()
    return got[0]


def _summary(window, tokens: int, stating: frozenset[int]) -> Turn:
    """A Markdown summary of ``window`` of about ``tokens`` tokens: headings, bullets, a few quotes.

    It quotes in full every turn in ``stating`` (where an obligation is stated or ended), as a correct
    summary keeps them, and the opening of other turns while it has room."""
    lines, used = ["## Summary of the session so far"], 0
    for i, t in enumerate(window):
        if used >= tokens and i not in stating:
            continue
        if i % 40 == 0:
            lines.append(f"### Stage {i // 40 + 1}")
        text = t.text.replace("\n", " ")
        line = f"- {t.role.value}: " + (text if i in stating else text[:160])
        lines.append(line)
        used += context_tokens([Turn(Role.SYSTEM, line)])
    return Turn(Role.SYSTEM, "\n".join(lines))


def _stating(transcript) -> frozenset[int]:
    """The turns where an obligation of ``transcript`` is stated or ended."""
    return frozenset(t for f in transcript.facts for t in (f.origin_turn, f.fate.turn) if t is not None)


def _shape(name: str, window, stating: frozenset[int] = frozenset()) -> CompactionResult:
    if name == "verbatim":
        return CompactionResult(tuple(window))
    if name == "summary+tail":
        head = len(window) // 2
        while head and window[head].role is Role.TOOL:  # keep a call with its result
            head -= 1
        return CompactionResult((_summary(window[:head], 4000, stating), *window[head:]))
    if name == "rewritten":
        return CompactionResult((Turn(Role.SYSTEM, "\n".join(f"{t.role.value} said: {t.text}" for t in window)),))
    lines = ["## Session so far"]
    for i, t in enumerate(window):
        if i % 50 == 0:
            lines.append(f"### Part {i // 50 + 1}")
        lines.append(f"- {t.role.value}: " + t.text.replace("\n", " "))
    return CompactionResult((Turn(Role.SYSTEM, "\n".join(lines)),))


# Compiled patterns depend on the rules and the literals, not on the text: a process compiles them
# once, so "cold" keeps them and empties every cache of what was read.
_PATTERN_CACHES = {"phrase_pattern", "literal_pattern", "_status_pattern", "_opening_pattern", "_masker"}


def _clear_caches() -> None:
    _context._OPENINGS_SEEN.clear()  # what the opening scan remembers per message
    _invented._WINDOWS_READ.clear()  # the last source window read per transcript
    for name, module in list(sys.modules.items()):
        if not name.startswith(("oracles", "harness")):
            continue
        for key, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and key not in _PATTERN_CACHES:
                value.cache_clear()


def _median_ms(run, repeats: int, before=None) -> float:
    """Median milliseconds of ``run()``; each repeat starts from empty caches, then ``before()``."""
    times = []
    for _ in range(repeats):
        _clear_caches()
        if before is not None:
            before()
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _boundary(transcript, shape: str, size: int, measure) -> int:
    """The shortest window whose context of ``shape`` measures at least ``size``."""
    low, high = 1, len(transcript.turns)
    stating = _stating(transcript)
    while low < high:
        mid = (low + high) // 2
        if measure(_shape(shape, transcript.turns[:mid], stating).messages) < size:
            low = mid + 1
        else:
            high = mid
    return low


def _streamed(turns) -> None:
    """What the session runner does before a round: count each turn of the window as it arrives."""
    for turn in turns:
        message_tokens(turn)


def _chars(messages) -> int:
    return sum(len(t.text) for t in messages)


_SCAN = re.compile(r"\w+|[^\w\s]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=12_000, help="turns of the generated transcript")
    args = parser.parse_args()
    transcript = _transcript(args.turns)
    stating = _stating(transcript)
    print(f"transcript: {len(transcript.turns)} turns, {len(transcript.facts)} facts, "
          f"{sum(len(t.text) for t in transcript.turns):,} characters; median of {args.repeats}")
    print(f"{'shape':13} {'size':>10} {'chars':>10} {'tokens':>8} {'violations':>10} {'cold ms':>8} "
          f"{'next-round ms':>14} {'one scan ms':>12} {'cold/scan':>10} {'next/scan':>10}")
    for shape in ("verbatim", "summary+tail", "rewritten", "markdown"):
        sizes = [(f"{size // 1000}k chars", _boundary(transcript, shape, size, _chars)) for size in SIZES]
        sizes.append(("180k tokens", _boundary(transcript, shape, TARGET_TOKENS, context_tokens)))
        for label, boundary in sorted(sizes, key=lambda s: s[1]):
            result = _shape(shape, transcript.turns[:boundary], stating)
            previous_boundary = max(1, boundary - boundary // 20)
            previous = _shape(shape, transcript.turns[:previous_boundary], stating)
            text = "\n".join(t.text for t in result.messages)
            tokens = context_tokens(result.messages)
            # A budget the context fits: the path every passing compaction takes (a failing one also
            # looks for near misses to name, which costs more and happens once per failure).
            budget = tokens + 1
            streamed = functools.partial(_streamed, transcript.turns[:boundary])
            cold = _median_ms(lambda: check(Case(transcript, boundary, budget, result)), args.repeats, before=streamed)
            following = _median_ms(lambda: check(Case(transcript, boundary, budget, result)), args.repeats,
                                   before=lambda: (check(Case(transcript, previous_boundary, budget, previous)),
                                                   streamed()))
            scan = _median_ms(lambda: _SCAN.findall(text), args.repeats)
            violations = len(check(Case(transcript, boundary, budget, result)).violations)
            print(f"{shape:13} {label:>10} {len(text):>10,} {tokens:>8,} {violations:>10} {cold:>8.1f} "
                  f"{following:>14.1f} {scan:>12.1f} {cold / scan:>9.1f}x {following / scan:>9.1f}x")


if __name__ == "__main__":
    main()
