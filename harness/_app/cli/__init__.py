"""The ``compaction-harness`` command line: its parser, the output-path rules and each command."""
