"""A summarizer that fails while it is imported: it prints a line, then calls sys.exit.

Used by docs/explanation/isolation.md: the harness imports it only in a worker process, so the run
ends with a SpecError (exit 2) that says what happened, never a silent exit 0.
"""

import sys

print("connecting to the model server...")
sys.exit("no API key")


def summarize(messages, budget):
    return messages[-3:]
