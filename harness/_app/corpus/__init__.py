"""Regression corpora: entries on disk, and replaying them."""
