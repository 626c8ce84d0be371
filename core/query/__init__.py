"""Queries: MBQL normalisation and compilation, native template tags, parameters, and the processor
that runs them (core.query.processor is the entry point for every plugin)."""
