"""Queries: MBQL normalisation (mbql) and compilation to SQL (compiler), native template tags (native),
parameters, and the processor that runs them (processor: the entry point for every plugin)."""
