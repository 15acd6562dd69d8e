"""Calling the summarizer under test: loading it, its transports (a worker process, a command, HTTP, an
OpenAI-compatible API), the call cache, redaction and the ``Summarizer`` every command calls."""
