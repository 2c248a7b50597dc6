"""Evaluation: how much of what later questions need survives a compaction."""
