"""Schema sync: tables, fields, PKs and FKs read from a database, then fingerprints, semantic types
and field values, stored in the app DB; and the background threads that run it.

A sync reads everything it needs from the source database first and only then writes, in one
app-DB transaction: a sync that fails leaves the previous metadata as it was and records the
error on the database. Tables and fields that vanish become inactive, never deleted.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time

from flask import has_app_context
from sqlalchemy import select, update

from core.appdb.bulk import insert_rows
from core.appdb.models import Database, Field, Table, utcnow
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.assembly.heap import collect_own_garbage
from core.sync import analyze

from .field_values import (
    store,
    store_many,
)
from .humanize import humanize, is_generated
from .sampling import (
    _listed,
    _scan,
    analyze_tables,
)
from .state import FieldState, TableState, _key, load_state

log = logging.getLogger("tessera.sync")



# --------------------------------------------------------------------------------------------------
# Metadata: tables, fields, PKs, FKs
# --------------------------------------------------------------------------------------------------


def merge_metadata(tables: dict, driver, engine, strategy: str) -> None:
    """Introspect the source database and fold what it says into `tables`."""
    introspection = getattr(driver, "introspection", None)
    with introspection(engine) if introspection is not None else contextlib.nullcontext():
        _merge_metadata(tables, driver, engine, strategy)


def _merge_metadata(tables: dict, driver, engine, strategy: str) -> None:
    seen_tables = set()
    for meta in driver.describe_tables(engine):
        key = _key(meta.schema, meta.name)
        seen_tables.add(key)
        table = tables.get(key)
        if table is None:
            table = tables[key] = TableState(key=key, values={
                "schema": meta.schema, "name": meta.name, "display_name": humanize(meta.name, strategy),
                "description": meta.description, "entity_type": analyze.entity_type(meta.name),
                "active": True, "initial_sync_status": "complete"})
        else:
            table.set("active", True)
            table.set("initial_sync_status", "complete")
            if is_generated(table.values["display_name"], meta.name):
                table.set("display_name", humanize(meta.name, strategy))
            if meta.description and not table.values.get("description"):
                table.set("description", meta.description)
        _merge_fields(table, driver.describe_fields(engine, meta), strategy)
        targets = {}
        for fk in driver.describe_fks(engine, meta):
            # No target schema means "found on the search path": the same schema first, else see _resolve_fks.
            targets[fk.column] = (_key(fk.target_schema if fk.target_schema is not None else meta.schema,
                                       fk.target_table), fk.target_column)
        for name, state in table.fields.items():
            state.fk_target = targets.get(name)
    for key, table in tables.items():
        if key not in seen_tables:
            table.set("active", False)


def _merge_fields(table: TableState, metas, strategy: str) -> None:
    seen = set()
    for meta in metas:
        seen.add(meta.name)
        state = table.fields.get(meta.name)
        if state is None:
            state = table.fields[meta.name] = FieldState(meta.name, {
                "name": meta.name, "display_name": humanize(meta.name, strategy), "description": meta.description,
                "database_type": meta.database_type, "base_type": meta.base_type, "effective_type": meta.base_type,
                "semantic_type": None, "coercion_strategy": None, "fk_target_field_id": None, "active": True,
                "visibility_type": "normal", "has_field_values": None, "position": meta.position,
                "database_position": meta.position, "database_is_auto_increment": meta.auto_increment,
                "database_required": meta.required, "fingerprint": None, "fingerprint_version": 0,
                "preview_display": True, "parent_id": None, "last_analyzed": None})
        else:
            state.set("active", True)
            if state.values["base_type"] != meta.base_type:
                # A new type makes the old fingerprint meaningless.
                state.set("fingerprint", None)
                state.set("fingerprint_version", 0)
            state.set("database_type", meta.database_type)
            state.set("base_type", meta.base_type)
            if not state.values.get("coercion_strategy"):
                state.set("effective_type", meta.base_type)
            state.set("database_position", meta.position)
            state.set("database_is_auto_increment", meta.auto_increment)
            state.set("database_required", meta.required)
            if is_generated(state.values["display_name"], meta.name):
                state.set("display_name", humanize(meta.name, strategy))
            if meta.description and not state.values.get("description"):
                state.set("description", meta.description)
        if meta.pk:
            state.set("semantic_type", "type/PK")
        # A PK the database does not declare (set by hand on a view, say) is kept, like a hand-set FK.
    for name, state in table.fields.items():
        if name not in seen:
            state.set("active", False)


# --------------------------------------------------------------------------------------------------
# Writing: one transaction
# --------------------------------------------------------------------------------------------------


def write_state(session, database_id: int, tables: dict, *, write_values: bool) -> None:
    now = utcnow()
    new_tables = [t for t in tables.values() if t.id is None]
    if new_tables:
        # Core inserts: an ORM flush per row would make sync of a wide schema slower than reading it.
        insert_rows(session, Table.__table__, [
            {**t.values, "db_id": database_id, "entity_id": new_entity_id(), "created_at": now, "updated_at": now}
            for t in new_tables])
    table_updates = [{"id": t.id, **{k: t.values[k] for k in t.changed}} for t in tables.values()
                     if t.id is not None and t.changed]
    _bulk_update(session, Table, table_updates)
    if new_tables:
        ids = {_key(s, n): i for i, s, n in session.execute(
            select(Table.id, Table.schema, Table.name).where(Table.db_id == database_id))}
        for t in new_tables:
            t.id = ids[t.key]

    new_fields = []
    for t in tables.values():
        for f in t.fields.values():
            if f.id is None:
                row = {k: v for k, v in f.values.items() if k != "id"}
                row.update(table_id=t.id, entity_id=new_entity_id(), created_at=now, updated_at=now)
                new_fields.append(row)
                f.changed.clear()
    if new_fields:
        insert_rows(session, Field.__table__, new_fields)
        ids = {(tid, name): fid for fid, tid, name in session.execute(
            select(Field.id, Field.table_id, Field.name).join(Table, Field.table_id == Table.id).where(
                Table.db_id == database_id, Field.parent_id.is_(None)))}
        for t in tables.values():
            for f in t.fields.values():
                if f.id is None:
                    f.id = ids[(t.id, f.name)]

    _resolve_fks(tables)
    field_updates = []
    for t in tables.values():
        for f in t.fields.values():
            changed = f.changed - {"id"}
            if changed:
                field_updates.append({"id": f.id, **{k: f.values[k] for k in changed}})
    _bulk_update(session, Field, field_updates)

    if write_values:
        store_many(session, {f.id: f.distinct[:2] for t in tables.values() for f in t.fields.values()
                             if f.distinct is not None and _listed(f)})


def _resolve_fks(tables: dict) -> None:
    for t in tables.values():
        for f in t.fields.values():
            target_id = None
            if f.fk_target is not None:
                target_table = tables.get(f.fk_target[0]) or _only_table_named(tables, f.fk_target[0][1])
                target = target_table.fields.get(f.fk_target[1]) if target_table else None
                target_id = target.id if target is not None else None
            if target_id is not None:
                # As Metabase's sync-fks: a foreign key is type/FK whatever analysis guessed.
                f.set("fk_target_field_id", target_id)
                f.set("semantic_type", "type/FK")
            # A target the database does not declare is kept: admins and dbt-metabase set FKs by hand
            # on warehouses without constraints, and Metabase's sync never removes them either.


def _only_table_named(tables: dict, name: str):
    """The one active table of that name in any schema (an FK whose target schema the driver left out)."""
    found = [t for key, t in tables.items() if key[1] == name and t.values.get("active", True)]
    if len(found) == 1:
        return found[0]
    return next((t for key, t in tables.items() if key == ("public", name)), None)


def _bulk_update(session, model, rows: list[dict]) -> None:
    # ORM bulk UPDATE by primary key: one executemany per set of changed columns.
    groups: dict[tuple, list[dict]] = {}
    now = utcnow()
    for row in rows:
        row["updated_at"] = now
        groups.setdefault(tuple(sorted(row)), []).append(row)
    for group in groups.values():
        session.execute(update(model), group)


# --------------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------------


def _strategy(state, session) -> str:
    try:
        return state.settings.get(session, "humanization-strategy") or "simple"
    except Exception:  # the setting's owner plugin absent: Metabase's default
        return "simple"


def sync_database(state, database_id: int, timings: dict | None = None) -> bool:
    """Sync one database: metadata, analysis, values. Returns False (error recorded) when it failed.

    `timings`, when given, receives the seconds spent introspecting, analysing and writing.
    """
    started = time.monotonic()
    timings = {} if timings is None else timings
    with state.db.session() as session:
        database = session.get(Database, database_id)
        if database is None:
            return False
        strategy = _strategy(state, session)
        refingerprint = bool(database.refingerprint)
        # is_full_sync off: metadata only; is_on_demand: values only when someone asks for them.
        full, scan_values = database.is_full_sync is not False, not database.is_on_demand
        tables = load_state(session, database_id)
        session.expunge(database)
    try:
        if database.is_sample:
            _restore_sample(database)
        with collect_own_garbage():
            if not _run(state, database, tables, strategy, (full, scan_values, refingerprint), timings):
                return False  # deleted while we were reading
    except Exception as exc:
        log.warning("sync of database %s failed: %s", database_id, exc, exc_info=True)
        _record_failure(state, database_id, exc)
        return False
    log.info("synced database %s in %.2fs (%s)", database_id, time.monotonic() - started,
             ", ".join(f"{k} {v:.2f}s" for k, v in timings.items()))
    with state.db.session() as session:
        synced = session.get(Database, database_id)
        if synced is not None:
            session.expunge(synced)
    if synced is not None:
        state.pm.hook.after_sync(database=synced)
    return True


def _run(state, database, tables: dict, strategy: str, modes: tuple[bool, bool, bool], timings: dict) -> bool:
    from core.driver import connections

    full, scan_values, refingerprint = modes
    driver = connections.driver_for(database)
    engine = connections.engine_for(database)
    phase = time.monotonic()
    merge_metadata(tables, driver, engine, strategy)
    _estimate_rows(tables, driver, engine)
    timings["introspect"], phase = time.monotonic() - phase, time.monotonic()
    if full:
        analyze_tables(tables, driver, engine, refingerprint, scan_values=scan_values)
    timings["analyze"], phase = time.monotonic() - phase, time.monotonic()
    with state.db.session() as session:
        row = session.get(Database, database.id)
        if row is None:
            return False
        write_state(session, database.id, tables, write_values=True)
        row.initial_sync_status = "complete"
        row.sync_error = None
        row.dbms_version = _dbms_version(driver, engine)
    timings["write"] = time.monotonic() - phase
    return True


def _restore_sample(database) -> None:
    """A Sample Database whose file went missing (a cleaned data dir) is generated again, as before."""
    from pathlib import Path

    from core.driver.crypto import decrypt_details
    from core.sync import sample_data

    path = Path(decrypt_details(database.details).get("db") or "")
    if path.name == sample_data.FILE_NAME and not path.exists():
        sample_data.ensure(path.parent.parent)


def _scan_only(tables: dict, driver, engine) -> None:
    for table in tables.values():
        if not table.values["active"]:
            continue
        active = [f for f in table.fields.values() if f.values["active"]]
        try:
            _scan(table, active, driver, engine, complete=False)
        except Exception as exc:
            log.warning("value scan of table %s failed: %s", table.values["name"], exc)


def _estimate_rows(tables: dict, driver, engine) -> None:
    """Each active table's estimated_row_count, as the driver's engine estimates it (None where it has
    no estimate); a failure leaves the counts as they were: they are informative."""
    from core.driver.records import TableMeta

    active = [t for t in tables.values() if t.values.get("active")]
    try:
        counts = driver.estimate_row_counts(engine, [TableMeta(name=t.values["name"], schema=t.values["schema"])
                                                     for t in active])
    except Exception as exc:
        log.warning("row count estimates failed: %s", exc)
        return
    for table in active:
        count = counts.get(table.key)
        table.values.setdefault("estimated_row_count", None)  # a new table's row has every column
        table.set("estimated_row_count", int(count) if isinstance(count, (int, float)) and count >= 0 else None)


def _dbms_version(driver, engine) -> dict | None:
    try:
        return driver.dbms_version(engine)
    except Exception:  # the version is informative; a sync does not fail for it
        return None


def _record_failure(state, database_id: int, exc: Exception) -> None:
    try:
        with state.db.session() as session:
            row = session.get(Database, database_id)
            if row is not None:
                row.sync_error = f"{type(exc).__name__}: {exc}"[:2000]
                if row.initial_sync_status == "incomplete":
                    row.initial_sync_status = "aborted"
                name, error = row.name, row.sync_error
    except Exception:
        log.exception("could not record the sync failure of database %s", database_id)
        return
    if has_app_context() and row is not None:  # a system event: plugins.subscriptions tells the administrators
        events.emit("database-sync-failed", None, None, database_id=database_id, database_name=name, error=error)


def rescan_values(state, database_id: int, field_ids: list[int] | None = None) -> bool:
    """Re-read the values of list fields (all of a database's, or only `field_ids`)."""
    from core.driver import connections

    with state.db.session() as session:
        database = session.get(Database, database_id)
        if database is None:
            return False
        tables = load_state(session, database_id)
        session.expunge(database)
    if field_ids is not None:
        wanted = set(field_ids)
        for table in tables.values():
            table.fields = {n: f for n, f in table.fields.items() if f.id in wanted}
    try:
        driver = connections.driver_for(database)
        engine = connections.engine_for(database)
        _scan_only(tables, driver, engine)
        with state.db.session() as session:
            for table in tables.values():
                for f in table.fields.values():
                    if f.distinct is not None and _listed(f):
                        store(session, f.id, *f.distinct[:2])
                    if "has_field_values" in f.changed:
                        session.execute(update(Field).where(Field.id == f.id).values(
                            has_field_values=f.values["has_field_values"]))
    except Exception as exc:
        log.warning("value scan of database %s failed: %s", database_id, exc)
        return False
    return True


# --------------------------------------------------------------------------------------------------
# Background runs
# --------------------------------------------------------------------------------------------------

_locks: dict[tuple[int, int], threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(state, database_id: int) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault((id(state), database_id), threading.Lock())


@contextlib.contextmanager
def locked(state, database_id: int):
    """The lock every run on one database takes (manual, background, scheduled): one sync or value scan
    of a database at a time, among this process's threads and then across every worker and instance on
    the app DB (core.appdb.locks), so that two started at once on two instances run one after the other."""
    with _lock_for(state, database_id), state.db.exclusive(f"sync-{database_id}"):
        yield


def start(database_id: int, job: str = "sync", app=None, **kwargs) -> threading.Thread | None:
    """Run a sync ("sync") or value scan ("values") of a database in the background.

    With TESSERA_SYNC_IN_FOREGROUND the work runs before this returns (deterministic scripts);
    `wait(app)` joins every background run.
    """
    if app is None:
        from flask import current_app

        app = current_app._get_current_object()
    state = app.extensions["tessera"]

    def work():
        with app.app_context(), locked(state, database_id):
            if job == "values":
                rescan_values(state, database_id, **kwargs)
            else:
                sync_database(state, database_id, **kwargs)

    if state.config.get("TESSERA_SYNC_IN_FOREGROUND"):
        work()
        return None
    thread = threading.Thread(target=work, name=f"tessera-sync-{database_id}", daemon=True)
    threads = state.extras.setdefault("sync_threads", [])
    threads[:] = [t for t in threads if t.is_alive()]
    threads.append(thread)
    thread.start()
    return thread


def wait(app, timeout: float | None = 120) -> None:
    """Join every background sync of this app (tests and the CLI use it)."""
    state = app.extensions["tessera"]
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        threads = [t for t in state.extras.get("sync_threads", []) if t.is_alive()]
        if not threads:
            return
        for thread in threads:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError("background sync still running")
