"""Implementation of the public strategies; import from ``strategies`` instead."""
