"""The analysis part of a sync: sampled rows fingerprinted and classified (core.sync.analyze), and the
distinct values of list fields scanned, a few tables at a time on server engines.
"""
from __future__ import annotations

import logging
from typing import Any

from sqlglot import exp

from core.appdb.models import utcnow
from core.sync import analyze

from .field_values import (
    LIST_KINDS,
    UNLISTABLE_VISIBILITY,
    column,
    fetch_distinct,
    limit_values,
    table_ref,
    too_many,
    with_limit,
)
from .state import FieldState, TableState

log = logging.getLogger("tessera.sync")

# Seconds one sample query of a table may take.
SAMPLE_TIMEOUT = 120


ANALYSIS_THREADS = 4


def analyze_tables(tables: dict, driver, engine, refingerprint: bool, scan_values: bool) -> None:
    """Fingerprint and classify the fields that need it, and read the values of list fields.

    Tables are independent, so a few are read at once: a network database answers one query while
    the next is sent (the pool holds more connections than the threads used here). An in-process
    engine (SQLite, DuckDB) is read from one thread: there threads only take turns at the GIL.
    """
    work = [t for t in tables.values() if t.values["active"] and any(f.values["active"] for f in t.fields.values())]
    if len(work) < 2 or driver.in_process():
        for table in work:
            _analyze_table(table, driver, engine, refingerprint, scan_values)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=ANALYSIS_THREADS, thread_name_prefix="tessera-analyze") as pool:
        for _ in pool.map(lambda t: _analyze_table(t, driver, engine, refingerprint, scan_values), work):
            pass


def _analyze_table(table: TableState, driver, engine, refingerprint: bool, scan_values: bool) -> None:
    active = [f for f in table.fields.values() if f.values["active"]]
    needs = [f for f in active if refingerprint or not f.values.get("fingerprint")
             or f.values.get("fingerprint_version", 0) < analyze.FINGERPRINT_VERSION]
    try:
        complete = False
        if needs:
            complete = _fingerprint(table, active, needs, driver, engine)
        if scan_values:
            _scan(table, active, driver, engine, complete)
        else:
            for state in active:
                state.distinct = None
    except Exception as exc:  # one unreadable table (a broken view) must not stop the sync
        log.warning("analysis of table %s failed: %s", table.values["name"], exc)


def _fingerprint(table: TableState, active: list[FieldState], needs: list[FieldState], driver, engine) -> bool:
    """Sample the table once; return whether the sample holds every row (values then need no query)."""
    tree = with_limit(exp.select(*(column(f.name) for f in active), copy=False).from_(_table_expr(table), copy=False),
                      analyze.MAX_SAMPLE_ROWS)
    sql = driver.to_sql(tree, owned=True)
    with driver.execute(engine, sql, {}, timeout=SAMPLE_TIMEOUT, max_rows=analyze.MAX_SAMPLE_ROWS) as result:
        rows = list(result.rows)
    columns = analyze.columns_of(rows, len(active))
    complete = len(rows) < analyze.MAX_SAMPLE_ROWS
    needed = {id(f) for f in needs}
    now = utcnow()
    for state, values in zip(active, columns):
        if complete:
            distinct = _distinct(values)
            state.distinct = (*limit_values(distinct, complete=True), too_many(distinct))
        if id(state) not in needed:
            continue
        v = state.values
        fp = analyze.fingerprint(v["base_type"], values)
        state.set("fingerprint", fp)
        state.set("fingerprint_version", analyze.FINGERPRINT_VERSION)
        state.set("last_analyzed", now)
        semantic = v["semantic_type"] or ("type/FK" if state.fk_target else None)
        for key, value in analyze.classify(v["name"], v["base_type"], semantic, v["has_field_values"], fp).items():
            state.set(key, value)
    return complete


def _distinct(values: list[Any]) -> list[Any]:
    seen: dict = {}
    for value in values:
        try:
            seen.setdefault(value, None)
        except TypeError:  # unhashable (JSON arrays): compare by text
            seen.setdefault(str(value), None)
    return list(seen)


def _listed(state: FieldState) -> bool:
    v = state.values
    return (v["has_field_values"] in LIST_KINDS and v["visibility_type"] not in UNLISTABLE_VISIBILITY
            and v.get("preview_display") is not False and v["base_type"] != "type/*")


def _scan(table: TableState, active: list[FieldState], driver, engine, complete: bool) -> None:
    for state in active:
        if not _listed(state):
            continue
        if state.distinct is None or not complete:
            state.distinct = fetch_distinct(driver, engine, _table_expr(table), state.name)
        if state.distinct[2] and state.values["has_field_values"] == "auto-list":
            # Too many values for a list: Metabase turns the field into a search field.
            state.set("has_field_values", None)
            state.distinct = None


def _table_expr(table: TableState) -> exp.Table:
    return table_ref(table.values["name"], table.values["schema"])
