"""The application layer: calling summarizers, running sessions, shrinking, corpora, reports, CLI, plugin.

It imports the base (``harness._base``), ``strategies`` and ``oracles``;
none of them imports it.
"""
