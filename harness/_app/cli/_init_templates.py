"""The text ``compaction-harness init`` writes: the wrapper, the pytest configuration, the corpus README and the
CI workflow, with ``<<name>>`` slots that ``_init`` fills (``fill``). Kept apart from the command's logic so
each template reads as the file it becomes."""

from __future__ import annotations

import re

__all__ = ["fill", "WRAPPER_HEAD", "RICH_STARTER", "RICH_TEAM", "MESSAGES_TEAM", "DIALECT_CALLS", "PYTEST_INI",
           "CORPUS_README", "WORKFLOW", "WORKFLOW_DIRECTORY", "PIN_PLACEHOLDER", "PIN_INSTALLED"]

_SLOT = re.compile(r"<<([a-z_]+)>>")


def fill(template: str, **values: str) -> str:
    """``template`` with each ``<<name>>`` replaced; a slot left unfilled is a bug of ours, said at once."""
    def value(match: re.Match) -> str:
        if match.group(1) not in values:
            raise KeyError(f"template slot <<{match.group(1)}>> has no value")
        return values[match.group(1)]
    return _SLOT.sub(value, template)


WRAPPER_HEAD = '''\
"""The summarizer compaction-harness tests: `python -m pytest` in this folder calls `summarize` below.

Written by `compaction-harness init <<options>>`.
The harness calls `summarize` once per compaction (the <<protocol>> protocol, the <<dialect>> dialect) with
<<contract>>
It judges every answer against the obligations the transcript really carried (docs/reference/protocols.md
of compaction-harness says what each protocol passes and accepts back).
"""
'''

# The rich starter: docs/examples/protocol_rich.py of compaction-harness, the protocol page's worked example.
RICH_STARTER = '''
from harness import CompactionRequest, CompactionResult, PartKind, Role, ToolCall, Turn, kind_def


def summarize(request: CompactionRequest) -> CompactionResult:
    """One compaction: the turns to compact, the budget and the live obligations (tags) in; the new context out."""
    # ---- YOUR COMPACTOR --------------------------------------------------------------------------------------
    # Call your own compactor here, in place of the starter below. If yours takes chat messages,
    # request.messages() gives the turns as chat messages, and a list of chat messages (or one string) is an
    # answer the harness accepts. `compaction-harness init --summarizer my_pkg.module:function` writes this
    # file again around a function you already have.
    return starter_compactor(request)
    # -----------------------------------------------------------------------------------------------------------


summarize.compaction_protocol = "rich"
summarize.compaction_protocol_version = <<version>>  # the version of the rich protocol this file was written for


def starter_compactor(request: CompactionRequest) -> CompactionResult:
    """THE STARTER: a small correct compactor, here so that the test runs at once. Replace it with yours.

    It states every tagged obligation in one sentence (its literals byte-exact), carries every call still
    waiting for its result as a structured tool call (so the result can be re-attached when it arrives), and
    hands back byte-exact what a provider needs of the turns it replaces (the reasoning of those calls,
    compaction items, approvals still waiting). A background job is stated by its handle, never rebuilt as a
    call: no result would ever answer it. The summary is a user message, because an Anthropic request needs
    one first. It drops the narrative: yours may keep more, within request.budget (harness.message_tokens).
    """
    answered = {t.tool_call_id for t in request.turns if t.role is Role.TOOL}
    in_flight: dict[str, ToolCall] = {}
    for turn in request.turns:  # calls made (or carried by the previous round) and not answered yet
        for call in turn.tool_calls:
            if call.id not in answered:
                in_flight.setdefault(call.id, call)
    lines = [f"Summary of {len(request.turns) - request.previous_output} new turns."]
    for fact in request.tags:  # the live obligations: kind, literals byte-exact, details
        lines.append(kind_def(fact.kind).statement(fact))
        trailing = str(fact.kind) == "in_flight_call" and fact.detail("mode") != "background"
        if trailing and fact.literals[0] not in in_flight and fact.literals[0] not in answered:
            call_id = fact.literals[0]  # a call carried only by a tag: rebuild it from its details
            in_flight[call_id] = ToolCall(call_id, fact.detail("name") or "unknown", fact.detail("arguments") or "{}")
    summary = Turn(Role.USER, "\\n".join(lines))
    approved = {p.id for t in request.turns for p in t.parts if p.kind is PartKind.APPROVAL}
    parts = tuple(dict.fromkeys(p for t in request.turns for p in t.parts  # each once, in order
                                if p.kind is PartKind.COMPACTION
                                or (p.kind is PartKind.APPROVAL_REQUEST and p.id not in approved)
                                or (p.kind is PartKind.REASONING and any(c.id in in_flight for c in t.tool_calls))))
    carried = (Turn(Role.ASSISTANT, "", tuple(in_flight.values()), parts=parts),) if in_flight or parts else ()
    return CompactionResult((summary, *carried))
'''

_PASSED_ON = '''
# What the harness reads off your function, passed on: that it may answer one request differently each time
# (a model at temperature > 0: set `compaction_may_vary = True` on it)<<and_version>>.
summarize.compaction_may_vary = getattr(your_compactor, "compaction_may_vary", False)
'''

RICH_TEAM = '''
from harness import CompactionRequest

# ---- YOUR COMPACTOR: the one import of your own code ------------------------------------------------------
<<imports>>
# -----------------------------------------------------------------------------------------------------------


def summarize(request: CompactionRequest):
    """One compaction: the turns to compact, the budget and the live obligations (tags) in; the new context out."""
    # ---- YOUR COMPACTOR: convert here, in and out, if yours takes another shape (request.messages() gives the
    # turns as chat messages; a list of chat messages or one string is an answer the harness accepts) --------
    return your_compactor(request)


summarize.compaction_protocol = "rich"
''' + fill(_PASSED_ON, and_version=", and the version of the rich protocol it was written for") + '''\
summarize.compaction_protocol_version = getattr(your_compactor, "compaction_protocol_version", None)
'''

MESSAGES_TEAM = '''
# ---- YOUR COMPACTOR: the one import of your own code ------------------------------------------------------
<<imports>>
# -----------------------------------------------------------------------------------------------------------


def summarize(<<argument>>, budget):
    """One compaction: the history and the token budget in, the new, shorter context out, in the same shape."""
    # ---- YOUR COMPACTOR: convert here, in and out, if yours takes another shape (your own message class, a
    # limit in characters instead of tokens: harness.count_tokens counts tokens as the harness does) --------
    return your_compactor(<<argument>>, budget)


summarize.compaction_protocol = "messages"
''' + fill(_PASSED_ON, and_version="")

# What a messages wrapper is called with in each dialect: (argument name, what comes in, what goes out).
DIALECT_CALLS = {
    "chat": ("messages", "OpenAI chat-completions messages (role, content, and tool_calls or tool_call_id)",
             "chat messages, or one string"),
    "anthropic": ("request", 'an Anthropic Messages request body {"system", "messages"}',
                  "a body of the same shape"),
    "openai-responses": ("items", "a list of OpenAI Responses input items", "a list of items"),
}

PYTEST_INI = '''\
# Written by `compaction-harness init`: plain `python -m pytest` in this folder runs compaction-harness (its
# pytest plugin) against summarizer_wrapper.py: one test per invariant, and one per entry of corpora/.
# Profile ci: 100 generated transcripts, the same ones every run, so a red test is your change, not luck.
# `--summarizer-profile nightly` looks further (1,000, new ones each run); `--summarizer-save` saves new
# minimal failures into corpora/. Every option: `python -m pytest --help`, under "compaction-harness".
# A compactor that calls a model wants --summarizer-jobs 8 (and --summarizer-may-vary if it varies).
[pytest]
addopts =
    --summarizer summarizer_wrapper.py:summarize
    --summarizer-protocol <<protocol>>
    --summarizer-dialect <<dialect>>
    --summarizer-profile ci
    --summarizer-corpus corpora
'''

CORPUS_README = '''\
# corpora

The corpus: the minimal failures compaction-harness found in your summarizer, one JSON file each. Commit
this folder: it is the permanent record, and `python -m pytest` in the folder above replays every entry
(`compaction-harness::replay[...]`), so a failure once found stays fixed. New entries come from
`python -m pytest --summarizer-save` or `compaction-harness run ... --corpus corpora`.
'''

PIN_PLACEHOLDER = '''\
  # The harness is installed from your copy of the compaction-harness repository at one commit (it is not on
  # a package index). Pin a full 40-hex commit, never a branch, and bump it in a pull request of its own:
  # `git ls-remote https://github.com/OWNER/compaction-harness main` (or `git rev-parse HEAD` in your
  # checkout) gives it.
  HARNESS_REPO: "OWNER/compaction-harness"
  HARNESS_REF: "0000000000000000000000000000000000000000"   # placeholder: the install step refuses it
'''

PIN_INSTALLED = '''\
  # The harness is installed from a compaction-harness repository at one commit (it is not on a package
  # index): the one `compaction-harness init` ran from. Bump it in a pull request of its own.
  HARNESS_REPO: "<<repo>>"
  HARNESS_REF: "<<ref>>"
'''

WORKFLOW_DIRECTORY = '''\
        working-directory: <<directory>>
'''

WORKFLOW = '''\
# compaction-harness on every push and pull request: `python -m pytest` where `compaction-harness init` wrote
# pytest.ini, which points the harness's pytest plugin at summarizer_wrapper.py. Red means an invariant
# broke (the failing test names it, with a minimal transcript and the command that reproduces it).
name: compaction

on:
  push:
  pull_request:
  workflow_dispatch: {}

permissions:
  contents: read

env:
<<pin>>
jobs:
  compaction:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    defaults:
      run:
        shell: bash
<<directory>>    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install the pinned harness, and this repository's package if it has one (for your compactor)
        working-directory: .
        run: |
          if [[ ! "$HARNESS_REF" =~ ^[0-9a-f]{40}$ || "$HARNESS_REF" =~ ^0+$ ]]; then
            echo "::error::HARNESS_REF is '$HARNESS_REF': set it to a full 40-hex commit of $HARNESS_REPO (see above)"
            exit 2
          fi
          pip install "compaction-harness @ git+https://github.com/${HARNESS_REPO}@${HARNESS_REF}"
          if [ -f pyproject.toml ] || [ -f setup.py ]; then pip install -e .; fi
      - name: Run the harness
        run: <<command>>
'''
