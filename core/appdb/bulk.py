"""Bulk inserts into the app database: many rows that share their keys, as one DBAPI executemany.

Sync writes thousands of tables, fields and field values at once; the ORM's per-row path was slower
than reading the schema (docs/ARCHITECTURE.md, "Data model, sync").
"""
from __future__ import annotations

import operator

_UNSET = object()


def insert_rows(session, table, rows: list[dict]) -> None:
    """INSERT many rows that share their keys, as one DBAPI executemany.

    SQLAlchemy's executemany builds parameters row by row in Python, which costs more than reading
    the schema on a wide database; here the statement is compiled once and each value goes through
    its column's bind processor only (once for a run of the same object).
    """
    if not rows:
        return
    conn = session.connection()
    keys = list(rows[0])
    compiled = table.insert().compile(dialect=conn.dialect, column_keys=keys)
    processors = compiled._bind_processors
    names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
    defaults = {}
    for name in names:
        if name not in rows[0]:  # a column with a Python-side default the rows leave out
            default = table.c[name].default
            defaults[name] = default.arg(None) if default is not None and default.is_callable else \
                (default.arg if default is not None else None)
    if defaults:
        rows = [{**defaults, **row} for row in rows]
    pick = operator.itemgetter(*names) if len(names) > 1 else (lambda row: (row[names[0]],))
    # Rows of a sync mostly repeat the same objects in a column (one timestamp, True, None): each
    # processor runs once per distinct object in a row, and its last answer is reused.
    memo = [(i, processors[name], [_UNSET, None]) for i, name in enumerate(names) if processors.get(name)]
    params = []
    for row in rows:
        values = list(pick(row))
        for i, process, last in memo:
            value = values[i]
            if value is not last[0]:
                last[0], last[1] = value, process(value)
            values[i] = last[1]
        params.append(tuple(values) if compiled.positional else dict(zip(names, values)))
    conn.exec_driver_sql(compiled.string, params)
