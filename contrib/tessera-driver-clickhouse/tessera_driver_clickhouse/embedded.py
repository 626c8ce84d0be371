"""The chDB transport: ClickHouse embedded in this process, on one database directory.

Rows stream as Arrow record batches (`send_query`), so a large result is never held at once.
chDB opens one directory per process (a second one is refused by the engine), and each connection
is its own ClickHouse session. Settings are applied with SET before the first statement, `readonly`
last: once set it cannot be lifted, which is what makes a locked session safe and also why such a
session is thrown away after one query. `INTO OUTFILE`, which the embedded client would carry out
even when read-only, is refused after ClickHouse's own parser finds it (`EXPLAIN AST`).
"""
from __future__ import annotations

import datetime as dt

from .transport import BaseConnection, Cursor, ProgrammingError, param_text

BATCH = 1000


def type_name(arrow_type, nullable: bool) -> str:
    """A ClickHouse type name for an Arrow column type (what the engine sent, read back)."""
    import pyarrow as pa

    t = arrow_type
    if pa.types.is_boolean(t):
        name = "Bool"
    elif pa.types.is_integer(t):
        name = f"{'UInt' if pa.types.is_unsigned_integer(t) else 'Int'}{t.bit_width}"
    elif pa.types.is_floating(t):
        name = f"Float{t.bit_width}"
    elif pa.types.is_decimal(t):
        name = f"Decimal({t.precision}, {t.scale})"
    elif pa.types.is_date(t):
        name = "Date32"
    elif pa.types.is_timestamp(t):
        name = "DateTime64"
    elif pa.types.is_time(t):
        name = "Time"
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        name = "String"
    else:
        name = str(t)
    return f"Nullable({name})" if nullable else name


def _plain(value):
    """Arrow gives ClickHouse DateTimes zone-aware (the session zone, UTC); Tessera's rows are naive UTC."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


EPOCH = dt.datetime(1970, 1, 1)


def _from_epoch(value):
    return None if value is None else EPOCH + dt.timedelta(seconds=value)


def converters(schema, types: list[str] | None) -> list:
    """Per column, None or a function making Arrow's value the Python value Tessera expects. Arrow
    carries a ClickHouse DateTime as its UInt32 seconds; the declared type (DESCRIBE) tells them apart."""
    import pyarrow as pa

    out = []
    for i, field in enumerate(schema):
        declared = _unwrap(types[i]) if types and i < len(types) else ""
        if pa.types.is_integer(field.type) and (declared == "DateTime" or declared.startswith("DateTime(")):
            out.append(_from_epoch)
        elif pa.types.is_timestamp(field.type) or pa.types.is_binary(field.type):
            out.append(_plain)
        else:
            out.append(None)
    return out


def _unwrap(kind: str) -> str:
    while kind.startswith(("Nullable(", "LowCardinality(")):
        kind = kind.split("(", 1)[1][:-1]
    return kind


def _rows(batch, convert=None) -> list[tuple]:
    columns = []
    for i, column in enumerate(batch.columns):
        values = column.to_pylist()
        fix = convert[i] if convert else _plain
        if fix is not None:
            values = [fix(v) for v in values]
        columns.append(values)
    return list(zip(*columns))


def _batches(reader, convert):
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        # ClickHouse sends whole blocks (up to ~65k rows): Python rows are made a slice at a time.
        for offset in range(0, batch.num_rows, BATCH):
            yield _rows(batch.slice(offset, BATCH), convert)


class EmbeddedConnection(BaseConnection):
    def __init__(self, path: str, database: str):
        import chdb

        super().__init__()
        self.database = database
        self._conn = chdb.connect(f"file:{path}")
        self._applied = False
        self._conn.query(f"USE {_identifier(database)}")

    def cursor(self):
        return Cursor(self)

    def close(self) -> None:
        self._conn.close()

    def _apply(self) -> None:
        if self._applied:
            return
        settings = self.settings()
        for name, value in settings.items():
            literal = f"'{value}'" if isinstance(value, str) else value
            if name != "readonly":
                self._conn.query(f"SET {name} = {literal}")
        if settings.get("readonly"):
            self._conn.query("SET readonly = 1")
        self._applied = True

    def run(self, sql: str, params: dict):
        self._apply()
        values = {name: param_text(value) for name, value in params.items()}
        if self.locked and _writes_a_file(self._conn, sql, values):
            raise ProgrammingError("INTO OUTFILE and table functions that open files or URLs are not allowed")
        types = self._declared_types(sql, values)  # before the stream: another query would end it
        try:
            stream = self._conn.send_query(sql, "Arrow", params=values)
        except Exception as error:
            if "Streaming query is not supported" not in str(error):
                raise
            table = self._conn.query(sql, "ArrowTable", params=values)
            return _describe(table.schema, None), iter([_rows(table)] if table is not None and table.num_rows else [])
        reader = stream.record_batch(rows_per_batch=BATCH)
        if not len(reader.schema):  # an empty result streams no schema: ask for it once more
            table = self._conn.query(sql, "ArrowTable", params=values)
            return _describe(table.schema, types), iter(())
        return _describe(reader.schema, types), _batches(reader, converters(reader.schema, types))

    def _declared_types(self, sql: str, values: dict) -> list[str] | None:
        """The result's ClickHouse types, as the engine declares them (Arrow's are approximations)."""
        try:
            table = self._conn.query(f"DESCRIBE TABLE ({sql})", "ArrowTable", params=values)
        except Exception:
            return None
        return [str(kind) for kind in table.column("type").to_pylist()]


def _describe(schema, types) -> list[tuple] | None:
    if schema is None or not len(schema):
        return None
    if types and len(types) == len(schema):
        return [(f.name, kind, None, None, None, None, None) for f, kind in zip(schema, types)]
    return [(f.name, type_name(f.type, f.nullable), None, None, None, None, None) for f in schema]


def _identifier(name: str) -> str:
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def _writes_a_file(conn, sql: str, values: dict) -> bool:
    """True when the statement writes or opens a file: an output file (in ClickHouse's AST dump a
    literal directly under the query node, where nothing else puts one) or a file-reading table function."""
    # A statement EXPLAIN cannot parse is refused with EXPLAIN's error: the check fails closed.
    dump = conn.query(f"EXPLAIN AST {sql}", "TSVRaw", params=values)
    lines = str(dump).splitlines()
    if any(line.startswith(" Literal") for line in lines):
        return True
    # A table function in FROM: only generators that read nothing are let through (readonly=1 refuses
    # the others, but some, like sqlite(), create their file before that refusal).
    for line, after in zip(lines, lines[1:]):
        if line.strip().startswith("TableExpression") and after.strip().startswith("Function "):
            if after.split()[1] not in SAFE_TABLE_FUNCTIONS:
                return True
    return False


SAFE_TABLE_FUNCTIONS = {"numbers", "numbers_mt", "zeros", "zeros_mt", "generate_series", "generateSeries", "values",
                        "null", "view"}
