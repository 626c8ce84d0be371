"""The HTTP transport: a ClickHouse server through clickhouse-connect.

Each statement is one HTTP request carrying its settings (`readonly=1` and the timeout when the
connection is locked), so nothing a statement does outlives it and a pooled client is safe to reuse.
Rows stream as row blocks (`query_row_block_stream`); closing the stream closes the HTTP response,
and `cancel_http_readonly_queries_on_client_close` makes the server stop the query then, which is
how a client that went away cancels its statement.
"""
from __future__ import annotations

import datetime as dt

from .transport import BaseConnection, Cursor


def _plain(value):
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


class HTTPConnection(BaseConnection):
    def __init__(self, details):
        import clickhouse_connect

        super().__init__()
        password = details.password.get_secret_value() if details.password else ""
        self.client = clickhouse_connect.get_client(
            host=details.host, port=details.port or (8443 if details.ssl else 8123), username=details.user,
            password=password, database=details.dbname, secure=details.ssl, connect_timeout=10,
            send_receive_timeout=details.read_timeout, autogenerate_session_id=False, query_retries=0)
        self._stream = None

    def cursor(self):
        return Cursor(self)

    def settings(self) -> dict:
        settings = super().settings()
        if settings:
            settings["cancel_http_readonly_queries_on_client_close"] = 1
        return settings

    def run(self, sql: str, params: dict):
        stream = self.client.query_row_block_stream(sql, parameters=params, settings=self.settings())
        stream.__enter__()
        self._stream = stream
        source = stream.source
        description = [(name, kind.name, None, None, None, None, None)
                       for name, kind in zip(source.column_names, source.column_types)] or None
        return description, _Blocks(stream)

    def cancel(self) -> None:
        stream = self._stream
        if stream is not None:
            stream.__exit__(None, None, None)

    def close(self) -> None:
        self.cancel()
        self.client.close()


class _Blocks:
    """Row blocks of a stream as lists of plain tuples; closing it ends the HTTP response."""

    def __init__(self, stream):
        self.stream = stream

    def __iter__(self):
        return self

    def __next__(self):
        block = next(self.stream)
        return [tuple(_plain(v) for v in row) for row in block]

    def close(self):
        self.stream.__exit__(None, None, None)
