"""Running queries: MBQL normalisation (mbql), compilation to SQL (compiler), and the processor."""
