"""Judging: one session streamed through a summarizer and checked by the oracles, survival over rounds,
and the ``audit`` of one real compaction."""
