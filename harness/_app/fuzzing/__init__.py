"""The ``fuzz`` command: libFuzzer processes over Hypothesis's choices, and what they found shrunk as
``run`` does."""
