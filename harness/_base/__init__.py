"""The base layer: the transcript model, the summarizer protocol, and reading and writing them.

Everything above imports from here (``strategies``, ``oracles`` and the
application in ``harness._app``); nothing here imports from them.
"""
