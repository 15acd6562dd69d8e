"""Reference summarizers, importable as ``module:function`` specs.

- ``identity:summarize`` returns its input (the false-positive check).
- ``ledgered:summarize`` is correct: a short narrative plus every tagged obligation verbatim in a
  structured ledger, within budget.
- ``prose:summarize`` is correct without a side channel: it states each obligation in plain prose.
- ``mutants:<name>`` each break exactly one invariant, the way the reference notes describe.
- ``naive:tail`` and ``naive:head_tail`` are the truncations many agents ship.
"""
