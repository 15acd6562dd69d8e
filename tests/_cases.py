"""Helpers that run a reference summarizer on a generated transcript and judge it."""

import dataclasses

from harness._base._compact import compact_once, request_for
from harness._base._model import ATTACHMENTS
from harness.strategies._internal import _phrasing as P
from harness.oracles import Case, check

BUDGET = 1500


def judge(summarize, transcript, *, protocol="rich", budget=BUDGET, boundary=None):
    boundary = transcript.compaction_points[0] if boundary is None else boundary
    result = compact_once(summarize, request_for(transcript, boundary, budget), protocol=protocol)
    case = Case(transcript, boundary, budget, result)
    return case, check(case)


def without_references(turns):
    """``turns`` with their provider parts and the sentences naming an earlier turn's attachment taken out: what a
    transcript was before ``with_provider_parts``, if that changed nothing else."""
    out, named = [], []
    for turn in turns:
        text = turn.text
        for sentence in (t.format(name=name) for name in named for t in P.ATTACHMENT_REFERENCES):
            text = text.replace(f" {sentence}", "").removeprefix(sentence)
        out.append(dataclasses.replace(turn, text=text, parts=()))
        named += [p.id for p in turn.parts if p.kind in ATTACHMENTS and p.id]
    return out
