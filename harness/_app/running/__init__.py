"""Running: the options, the spend and time budget, exploration, and the one path every command's
judging and shrinking goes through."""
