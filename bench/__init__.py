"""Benchmarks: each prints its figures as ratios against baselines measured in the same run."""
