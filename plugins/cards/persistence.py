"""Persisted models, the write side: filling, refreshing and dropping the table that holds a model's
result inside the model's own database, and switching persistence on and off per database.

Data connections are read-only by design (core.driver.sql); this module (with uploads, which use it) is
the one place Tessera writes to a registered database, and only to names it owns: the driver's
`owned_schema`, or the table prefix `tessera_cache_` in the default schema. How an engine opens a
writable transaction is its driver's `writable`; which engines can is the `persist-models` feature.
Tables are built with SQLAlchemy Core (quoted identifiers, bound values); no request text reaches the
statements. Persisting runs in the request, so its outcome (persisted or error) is known when the
endpoint answers. (The query side, reading a persisted table, is core.query.persistence.)
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, PersistedInfo, User, utcnow
from core.driver.connections import driver_for, engine_for, validate_details
from core.driver.crypto import decrypt_details
from core.http.errors import Invalid
from core.query.persistence import TABLE_PREFIX, definition_hash, persisted_info

FEATURE = "persist-models"
INSERT_BATCH = 1000
# Every row of the model, up to the absolute result cap (core.query.limits).
PERSIST_CONSTRAINTS = {"max-results": 1048575, "max-results-bare-rows": 1048575}

_TYPES = (
    (("type/BigInteger", "type/Integer"), sa.BigInteger),
    (("type/Float",), sa.Float),
    (("type/Decimal", "type/Currency"), sa.Numeric),
    (("type/Boolean",), sa.Boolean),
    (("type/Date",), sa.Date),
    (("type/DateTimeWithLocalTZ", "type/DateTimeWithTZ", "type/DateTimeWithZoneOffset"), lambda: sa.DateTime(timezone=True)),
    (("type/DateTime",), sa.DateTime),
    (("type/Time",), sa.Time),
)


def column_type(base_type: str | None):
    for names, kind in _TYPES:
        if base_type in names:
            return kind()
    return sa.Text()


def check_supported(database: Database) -> None:
    if FEATURE not in driver_for(database).features:
        raise Invalid(f"Persisting models is not supported for {database.engine} databases.")


def location(database: Database, card_id: int) -> tuple[str | None, str]:
    """(schema, table) of a model's persisted table."""
    schema = driver_for(database).owned_schema
    if schema is not None:
        return schema, f"model_{card_id}"
    return None, f"{TABLE_PREFIX}model_{card_id}"


@contextlib.contextmanager
def writable(database: Database) -> Iterator[Connection]:
    """A connection to the database in a transaction that may write, committed when the block ends."""
    check_supported(database)
    details = validate_details(database.engine, decrypt_details(database.details))
    with driver_for(database).writable(engine_for(database), details) as conn:
        yield conn


def _table(schema: str | None, name: str, cols: list[dict]) -> sa.Table:
    metadata = sa.MetaData()
    return sa.Table(name, metadata, *[sa.Column(c["name"], column_type(c.get("base_type"))) for c in cols],
                    schema=schema, quote=True)


def drop(database: Database, schema: str | None, name: str) -> None:
    with writable(database) as conn:
        sa.Table(name, sa.MetaData(), schema=schema, quote=True).drop(conn, checkfirst=True)


def check_can_write(database: Database) -> None:
    """Database persistence is switched on only where Tessera can create (and drop) its tables."""
    schema, name = location(database, 0)
    probe = f"{name}_probe"
    try:
        with writable(database) as conn:
            if schema is not None:
                conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
            table = sa.Table(probe, sa.MetaData(), sa.Column("x", sa.Integer), schema=schema, quote=True)
            table.drop(conn, checkfirst=True)
            table.create(conn)
            table.drop(conn)
    except Invalid:
        raise
    except Exception as exc:  # the engine's refusal (missing grant, read-only file) is the useful message
        raise Invalid(f"Tessera cannot create tables for persisted models in this database: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    return (str(original).strip().splitlines() or [type(original).__name__])[0]


def persist(session: Session, user: User, card: Card) -> PersistedInfo:
    """Run the model and (re)write its table; the PersistedInfo row says how it went."""
    from core.query import processor
    from core.query.errors import QueryFailed

    database = session.get(Database, card.database_id)
    schema, name = location(database, card.id)
    info = persisted_info(session, card)
    if info is None:
        info = PersistedInfo(card_id=card.id, database_id=database.id, question_slug=_slug(card.name),
                             creator_id=user.id)
        session.add(info)
    info.schema_name, info.table_name = schema, name
    info.state, info.active, info.error = "refreshing" if info.id else "creating", False, None
    info.refresh_begin, info.state_change_at = utcnow(), utcnow()
    session.commit()
    try:
        result = processor.open_query(session, user, card.dataset_query, context="persistence",
                                      constraints=dict(PERSIST_CONSTRAINTS))
        with result:
            cols = _unique_columns(result.cols)
            # A SQLite reader's lock would block the writer's commit on the same file: read first.
            rows = list(result) if driver_for(database).read_before_write else result
            with writable(database) as conn:
                if schema is not None:
                    conn.execute(sa.schema.CreateSchema(schema, if_not_exists=True))
                table = _table(schema, name, cols)
                table.drop(conn, checkfirst=True)
                table.create(conn)
                _insert(conn, table, [c["name"] for c in cols], rows)
    except (QueryFailed, Invalid) as exc:
        return _failed(session, info, getattr(exc, "message", str(exc)))
    except sa.exc.SQLAlchemyError as exc:
        return _failed(session, info, _first_line(exc))
    info.state, info.active, info.error = "persisted", True, None
    info.query_hash = definition_hash(card)
    info.definition = {"table-name": name, "field-definitions": [
        {"field-name": c["name"], "base-type": c.get("base_type")} for c in cols]}
    info.refresh_end = info.state_change_at = utcnow()
    session.commit()
    return info


def _insert(conn: Connection, table: sa.Table, keys: list[str], rows) -> None:
    batch: list[dict] = []
    for row in rows:
        batch.append(dict(zip(keys, row)))
        if len(batch) >= INSERT_BATCH:
            conn.execute(table.insert(), batch)
            batch.clear()
    if batch:
        conn.execute(table.insert(), batch)


def _failed(session: Session, info: PersistedInfo, message: str) -> PersistedInfo:
    session.rollback()
    info.state, info.active, info.error = "error", False, message
    info.refresh_end = info.state_change_at = utcnow()
    session.commit()
    return info


def _unique_columns(cols: list[dict]) -> list[dict]:
    seen: dict[str, int] = {}
    out = []
    for col in cols:
        name = str(col.get("name") or "column")
        key = name.lower()
        if key in seen:
            seen[key] += 1
            name = f"{name}_{seen[key]}"
        else:
            seen[key] = 1
        out.append({**col, "name": name})
    return out


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:64] or "model"


def unpersist(session: Session, card: Card) -> None:
    """Drop the model's table; queries go back to the model's own query."""
    info = persisted_info(session, card)
    if info is None:
        return
    database = session.get(Database, card.database_id)
    if info.table_name:
        drop(database, info.schema_name, info.table_name)
    info.state, info.active = "off", False
    info.state_change_at = utcnow()
    session.commit()


def disable_database(session: Session, database: Database) -> None:
    """Switch persistence off for a database: every persisted table of it is dropped."""
    from sqlalchemy import select

    infos = list(session.scalars(select(PersistedInfo).where(PersistedInfo.database_id == database.id)))
    for info in infos:
        if info.table_name:
            drop(database, info.schema_name, info.table_name)
        session.delete(info)
    settings = dict(database.settings or {})
    settings["persist-models-enabled"] = False
    database.settings = settings
    session.commit()
