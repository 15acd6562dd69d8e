"""Helpers that run a reference summarizer on a generated transcript and judge it."""

from harness._base._compact import compact_once, request_for
from harness.oracles import Case, check

BUDGET = 1500


def judge(summarize, transcript, *, protocol="rich", budget=BUDGET, boundary=None):
    boundary = transcript.compaction_points[0] if boundary is None else boundary
    result = compact_once(summarize, request_for(transcript, boundary, budget), protocol=protocol)
    case = Case(transcript, boundary, budget, result)
    return case, check(case)
