"""Benchmarks (not tests): each bench/<name>_bench.py has a main() that prints its figures."""
