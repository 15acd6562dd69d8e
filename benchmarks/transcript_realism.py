#!/usr/bin/env python3
"""How hard the generated transcripts are: figures a summarizer could exploit if they were easy.

Prints, over N transcripts of the default strategy (derandomized, so the same on every machine):
the share of non-obligation turns whose text or call arguments contain a digit or an underscore
(if none did, "has a digit" would mean "is an obligation"), distinct lines per 1,000 such turns,
tokens per turn (median, p90, max, as the budget counts them) and per transcript, and the share of
transcripts that carry at least one decoy. Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import statistics

from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from harness._base._tokens import message_tokens
from harness.strategies import expand, skeletons

_DIGIT_OR_UNDERSCORE = re.compile(r"[\d_]")


def _token_in(text: str, literal: str) -> bool:
    return re.search(r"(?<![\w])(?<![\w][.\-])" + re.escape(literal) + r"(?![\w])(?![.\-:/]\w)", text) is not None


def _obligation_turns(transcript) -> set[int]:
    """Turns the ledger points at, and turns stating a ledger literal (bare numbers aside)."""
    marked = {f.origin_turn for f in transcript.facts} | {f.fate.turn for f in transcript.facts if f.fate.turn is not None}
    literals = {lit for f in transcript.facts for lit in f.literals if not lit.isdigit()}
    for i, turn in enumerate(transcript.turns):
        text = turn.text + "".join(c.id + c.arguments for c in turn.tool_calls)
        if any(lit in text and _token_in(text, lit) for lit in literals):
            marked.add(i)
    return marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--max-turns", type=int, default=400)
    args = parser.parse_args()
    drawn = []

    @settings(max_examples=args.examples, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(skeletons(max_turns=args.max_turns))
    def collect(skeleton):
        drawn.append((expand(skeleton), bool(getattr(skeleton, "decoys", ()))))

    collect()
    filler = with_digits = 0
    lines: set[str] = set()
    per_turn: list[int] = []
    per_transcript: list[int] = []
    decoyed = 0
    for transcript, has_decoys in drawn:
        skip = _obligation_turns(transcript)
        per_transcript.append(sum(message_tokens(t) for t in transcript.turns))
        decoyed += has_decoys
        for i, turn in enumerate(transcript.turns):
            if i in skip:
                continue
            filler += 1
            with_digits += bool(_DIGIT_OR_UNDERSCORE.search(turn.text + "".join(c.arguments for c in turn.tool_calls)))
            lines.update(line for line in turn.text.splitlines() if line.strip())
            per_turn.append(message_tokens(turn))
    p90 = statistics.quantiles(per_turn, n=10)[-1]
    print(f"{len(drawn)} transcripts, {sum(len(t.turns) for t, _ in drawn)} turns, {filler} not stating an obligation")
    print(f"turns with a digit or underscore: {with_digits / filler:.1%}")
    print(f"distinct lines per 1,000 turns:   {len(lines) / filler * 1000:.0f}")
    print(f"tokens per turn:                  median {statistics.median(per_turn):.0f}, p90 {p90:.0f}, max {max(per_turn)}")
    print(f"tokens per transcript:            median {statistics.median(per_transcript):.0f}")
    print(f"transcripts with decoys:          {decoyed / len(drawn):.0%}")


if __name__ == "__main__":
    main()
