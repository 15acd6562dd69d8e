#!/usr/bin/env python3
"""Write ``fuzz/seeds/TARGET/``: a few small valid documents per target, and one structured input.

The documents come from the same pool the targets mutate (``fuzz._pool``), so a seed is always
valid for this release's schema; re-run this after a schema change. ``structured.bin`` (zero
bytes) starts the Hypothesis path: the first pool document, unmutated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fuzz import _pool  # noqa: E402


def _smallest(docs: list[str], n: int) -> list[str]:
    return sorted(docs, key=len)[:n]


def seeds() -> dict[str, dict[str, str]]:
    wire = _pool.wire_docs()
    answers = [d for d in wire if '"choices"' not in d and '"schema"' not in d]
    return {
        "transcript": {f"transcript-{i}.json": d for i, d in enumerate(_smallest(_pool.transcript_docs(), 3))},
        "corpus_entry": {f"entry-{i}.json": d for i, d in enumerate(_smallest(_pool.entry_docs(), 3))},
        "result": {"messages.json": json.dumps(_pool.result_recipes()[0], ensure_ascii=False),
                   "string.json": json.dumps(_pool.result_recipes()[2], ensure_ascii=False),
                   "result-dict.json": json.dumps(_pool.result_recipes()[5], ensure_ascii=False)},
        "wire": {"request-messages.json": _smallest([d for d in wire if '"protocol": "messages"' in d], 1)[0],
                 "request-rich.json": _smallest([d for d in wire if '"protocol": "rich"' in d], 1)[0],
                 "answer.json": _smallest([d for d in answers if '"usage"' in d], 1)[0],
                 "answer-error.json": _smallest([d for d in answers if '"error"' in d], 1)[0],
                 "chat-completion.json": _smallest([d for d in wire if '"chat.completion"' in d], 1)[0],
                 "chat-refusal.json": _smallest([d for d in wire if '"refusal": "' in d], 1)[0]},
    }


def main() -> None:
    for target, files in seeds().items():
        folder = HERE / "seeds" / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text + "\n", encoding="utf-8")
        (folder / "structured.bin").write_bytes(bytes(64))
        print(f"{folder}: {len(files) + 1} seeds")


if __name__ == "__main__":
    main()
