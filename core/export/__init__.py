"""Streaming export writers (csv, json, xlsx): each turns result columns and a row iterator into an
iterator of byte chunks, so a download of a million rows holds one chunk in memory, not the file.

Plugins register them as core.assembly.records.Exporter through `register_exporters`; endpoints find them in
app.extensions['tessera'].exporters by format.
"""

import itertools
from typing import Iterable, Iterator

BATCH = 2000


def batched(rows: Iterable) -> Iterator[list]:
    """Lists of rows: a query Result's own batches, or slices of any iterable of rows."""
    batches = getattr(rows, "batches", None)
    if batches is not None:
        yield from batches()
        return
    source = iter(rows)
    while True:
        batch = list(itertools.islice(source, BATCH))
        if not batch:
            return
        yield batch
