"""Benchmarks of recap, kept out of the installed package (``python -m benchmarks``).

Each figure is a ratio to a baseline measured in the same run, so a shared, noisy
machine slows both sides alike and the ratio still means something. Nothing here
asserts a time."""
