<<<<<<< HEAD
"""Queries: MBQL normalisation and compilation, native template tags, parameters, and the processor
that runs them (core.query.processor is the entry point for every plugin)."""
=======
"""Running queries: MBQL normalisation (mbql), compilation to SQL (compiler), and the processor."""
>>>>>>> main
