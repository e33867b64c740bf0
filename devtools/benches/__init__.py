"""Benchmark sections for `make bench`: each module defines bench(), yielding (label, value) rows.

Time things side by side in one run and report ratios: the machine is shared and noisy.
"""
