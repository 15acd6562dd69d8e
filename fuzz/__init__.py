"""Coverage-guided fuzz targets for the places where outside bytes and values reach the harness.

``fuzz/targets.py TARGET`` runs one under atheris; ``fuzz/run_targets.py`` runs them all for a
bounded time. The target functions themselves (``fuzz._targets``) need no atheris, so the test
suite replays every seed and saved crash through them.
"""
