"""Shrinking one failure: the domain moves on a transcript and the shrinker that orders them."""
