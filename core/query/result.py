"""A query's streamed result: columns known up front, rows read once in batches (or as CSV or JSON text
the driver writes, or as the JSON a cache stored), close callbacks run exactly once; and how a failure
while running becomes QueryFailed.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import logging
import time
from typing import Callable, Iterator

from core.http.errors import ApiError, Invalid

from .context import QueryContext
from .errors import QueryFailed

log = logging.getLogger("tessera.query")

BATCH = 2000
_END = object()


class Result:
    """Columns known up front, rows streamed once; closing runs the callbacks exactly once."""

    def __init__(self, context: QueryContext, cols: list[dict], rows: Iterator[tuple], native_form: dict | None,
                 closer: Callable[[], None] | None = None, cached: dt.datetime | None = None,
                 csv: Callable | None = None, encoded: bytes | None = None, iso_text: Callable | None = None,
                 json: Callable | None = None):
        self.context = context
        self.cols = cols
        self._rows = rows
        self._csv = csv
        self._started = False
        self.native_form = native_form
        self._closer = closer
        self.cached = cached
        self.row_count = 0
        self.truncated = False
        self.error: BaseException | None = None
        self.finished_at: float | None = None
        self._callbacks: list[Callable[["Result"], None]] = []
        self._taps: list[Callable[[tuple], None]] = []
        self._closed = False
        # A stored response's `data` object (core.query.results.data_body), served without decoding its rows.
        self.encoded = encoded
        self._iso_text = iso_text
        self._json = json
        # Columns whose temporal text the driver reads in ISO-8601 form (read_iso_text).
        self.iso_columns: frozenset[int] = frozenset()
        self._body_callbacks: list[Callable[[bytes], None]] = []

    def on_close(self, callback: Callable[["Result"], None]) -> None:
        self._callbacks.append(callback)

    def tap(self, callback: Callable[[list], None]) -> None:
        """Called with every batch of rows as it streams past (the cache keeps a copy this way)."""
        self._taps.append(callback)

    def on_body(self, callback: Callable[[bytes], None]) -> None:
        """Called with the encoded `data` object once a completed response is built from these rows
        (the cache stores it so); never for streamed reads (exports) or failures."""
        self._body_callbacks.append(callback)

    def body_built(self, data: bytes) -> None:
        for callback in self._body_callbacks:
            try:
                callback(data)
            except Exception:  # storing a copy must not fail the query
                log.exception("query body callback failed")

    @property
    def running_time(self) -> int:
        end = self.finished_at or time.monotonic()
        return int((end - self.context.started) * 1000)

    @property
    def writes_csv(self) -> bool:
        """Whether csv_chunks can be read: the driver writes CSV text itself (core.driver.records.QueryResult.csv),
        no row has been read, and nothing needs the rows as values (the cache's tap does)."""
        return self._csv is not None and not self._started and not self._taps

    def csv_accepts(self, layout) -> bool:
        """Whether the driver writes these columns under `layout` itself (a driver's csv may have an
        `accepts(layout)`: DuckDB's writes only what its SQL can write as core.export.csv does)."""
        accepts = getattr(self._csv, "accepts", None)
        return self.writes_csv and (accepts is None or accepts(layout))

    def csv_chunks(self, layout, size: int) -> Iterator[bytes]:
        """The rows as CSV text written by the driver (core.driver.records.CsvLayout), in chunks of about
        `size` bytes, cut at the row limit; closes the result at the end. Only when writes_csv."""
        assert self.writes_csv
        self._started = True
        limit = self.context.max_rows
        with self._reading():
            while True:
                text, count, more = self._csv(layout, size, None if limit is None else limit - self.row_count)
                self.row_count += count
                if text:
                    yield text
                if not more:
                    break
                if limit is not None and self.row_count >= limit:
                    self.truncated = True
                    break
            self._note_limit()

    def json_rows(self, int_bound: int, cell: Callable[[object], bytes]) -> tuple[bytes, tuple] | None:
        """The rows as one JSON array written by the driver (core.driver.records.QueryResult.json), cut
        at the row limit as batches() cuts them, and per column its first non-null value among the
        first 100 rows; the result closes. None, reading nothing, when the driver does not write JSON,
        a row was read already or something needs the rows as values (a tap)."""
        if self._json is None or self._started or self._taps:
            return None
        self._started = True
        limit = self.context.max_rows
        with self._reading():
            text, count, more, firsts = self._json(limit, int_bound, cell)
            self.row_count = count
            if more and limit is not None and count >= limit:
                self.truncated = True  # as batches(): a row past the limit was there
            self._note_limit()
        return text, firsts

    def read_iso_text(self, indexes: list[int]) -> None:
        """Before the first row: have the driver give these columns' temporal text in ISO-8601 form when
        it can (core.driver.records.QueryResult.iso_text); iso_columns says which it does."""
        if self._iso_text is not None and indexes and not self._started:
            self._iso_text(indexes)
            self.iso_columns = frozenset(indexes)

    def batches(self, size: int = BATCH) -> Iterator[list]:
        """The rows in lists of up to `size`, cut at the row limit; closes the result at the end."""
        self._started = True
        limit = self.context.max_rows
        source = iter(self._rows)
        with self._reading():
            while True:
                want = size if limit is None else min(size, limit - self.row_count)
                if want <= 0:
                    if next(source, _END) is not _END:  # the core fetched one row past the limit
                        self.truncated = True
                    break
                batch = list(itertools.islice(source, want))
                if not batch:
                    break
                self.row_count += len(batch)
                for tap in self._taps:
                    tap(batch)
                yield batch
            self._note_limit()

    def _note_limit(self) -> None:
        limit = self.context.max_rows
        if limit is not None and self.row_count == limit and self.context.limit_from_constraints:
            self.truncated = True

    @contextlib.contextmanager
    def _reading(self):
        """Around reading the rows: a failure is recorded (as QueryFailed) and the result closes at the end."""
        try:
            yield
        except QueryFailed as exc:
            self.error = exc
            raise
        except Exception as exc:
            self.error = as_failure(self.context, exc)
            raise self.error from exc
        finally:
            self.close()

    def __iter__(self) -> Iterator[tuple]:
        for batch in self.batches():
            yield from batch

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.finished_at = time.monotonic()
        try:
            if self._closer is not None:
                self._closer()
        finally:
            for callback in self._callbacks:
                try:
                    callback(self)
                except Exception:  # a failed audit write must not fail the query
                    log.exception("query close callback failed")

    def __enter__(self) -> "Result":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def as_failure(context: QueryContext, exc: BaseException) -> QueryFailed:
    from core.driver.records import QueryError, QueryTimeout

    if isinstance(exc, QueryFailed):
        return exc
    if isinstance(exc, QueryTimeout):
        return QueryFailed(exc.message, "timed-out")
    if isinstance(exc, QueryError):
        return QueryFailed(exc.message, "driver")
    if isinstance(exc, Invalid):
        return QueryFailed(error_message(exc), "invalid-query")
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError):  # connecting failed (the driver translates statement errors)
        original = exc.orig or exc
        return QueryFailed(str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__,
                           "driver")
    log.exception("query failed unexpectedly")
    return QueryFailed(str(exc) or type(exc).__name__, "qp")


def error_message(error: ApiError) -> str:
    body = error.body
    if isinstance(body, dict):
        errors = body.get("errors")
        if isinstance(errors, dict) and errors:
            return "; ".join(f"{k}: {v}" for k, v in errors.items())
        return str(body.get("message") or error.message)
    return str(body)
