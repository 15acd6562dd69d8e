"""Reference summarizers, importable as ``module:function`` specs.

- ``identity:summarize`` returns its input (the false-positive check).
- ``ledgered:summarize`` is correct: a short narrative plus every tagged obligation verbatim in a
  structured ledger, within budget. A tagged call in flight rides in its ledger entry.
- ``prose:summarize`` is correct without a side channel: it states each obligation in plain prose, and
  re-attaches each call still in flight as a structured tool call.
- Both speak rich protocol 2: a recovery marker at the request's tier naming a node fresh to that tier
  (``resolved_calls`` only calls whose result is in the input), a journal of one edit that replays to
  the result and rolls back to the input byte-exact, and as ``verified`` only ``journal-reversible``,
  the one class they check on the result itself (``_render.with_protocol2``).
- ``mutants:<name>`` each break exactly one invariant, the way the reference notes describe;
  ``mutants.SESSION_MUTANTS`` those that break a session-level one (across rounds, after a
  tightening, between two calls).
- ``naive:tail`` and ``naive:head_tail`` are the truncations many agents ship.
"""
