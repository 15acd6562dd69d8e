"""The reading the built-in oracles share, for a team's own oracles: ``case.context`` is a ``Context``.

Ask the context for the units holding a literal (``sentences_with``, ``clauses_with``, ``lines_with``,
each a ``Clause`` whose ``text`` is its reading and ``lower`` that text lowered with names masked), and
whether a literal is kept at all (``mentions``, ``ledger_entry``); then whether a cue governs it
(``governing_cue``: in its unit, earlier in its clause, or in a heading, key or column over its line,
negation and scope honoured). Cue words are a team's to pass, usually from ``case.rules``. A line's
reading carries the headings, keys and columns over it (``reading_lines``).
"""

from harness.oracles._context import Context
from harness.oracles._cues import cue_near, free_cue, governing_cue, negated
from harness.oracles._lexicon import name_shaped, phrase_pattern
from harness.oracles._structure import reading_lines
from harness.oracles._units import Clause

__all__ = ["Clause", "Context", "cue_near", "free_cue", "governing_cue", "name_shaped", "negated", "phrase_pattern",
           "reading_lines"]
