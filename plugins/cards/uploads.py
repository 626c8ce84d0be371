"""POST /api/card/from-csv: a CSV becomes a table in the uploads database and a model on it.

The uploads database is the one the `uploads-settings` setting names ({db_id, schema_name,
table_prefix}); by default Tessera's own SQLite file `uploads.sqlite` in the first allowed data-file
directory, registered on first use as the database "Uploads". The file is parsed and typed first;
then the table is created and filled in one transaction, and its Table and Field rows and the model
are written in one app-DB transaction. If that fails the table is dropped again.
"""
from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, Field, Table, User
from core.assembly import events
from core.http.errors import Forbidden, Invalid
from core.policy import permissions as perms

from . import csvfile, persistence
from .service import _check_collection, _entity_id, _record

DEFAULT_DB_NAME = "Uploads"
DEFAULT_FILE = "uploads.sqlite"
TABLE_PREFIX = "upload_"


def _settings(session: Session) -> dict:
    from core.http.auth import tessera

    value = tessera().settings.get_or(session, "uploads-settings")
    return value if isinstance(value, dict) else {}


def _default_database(session: Session) -> Database:
    """Tessera's own uploads SQLite file, created and registered on first use."""
    import sqlite3

    from core.driver import ConnectionPolicy
    from core.driver.crypto import encrypt_details
    from core.http.auth import tessera

    policy = ConnectionPolicy.from_config(tessera().config)
    folder = policy.file_dirs[0] if policy.file_dirs else Path(tessera().config["TESSERA_DATA_DIR"]) / "files"
    os.makedirs(folder, exist_ok=True)
    path = str(Path(folder) / DEFAULT_FILE)
    for database in session.scalars(select(Database).where(Database.engine == "sqlite", Database.uploads_enabled.is_(True))):
        from core.driver.crypto import decrypt_details

        if decrypt_details(database.details).get("db") == path:
            return database
    sqlite3.connect(path).close()
    database = Database(name=DEFAULT_DB_NAME, engine="sqlite", details=encrypt_details({"db": path}),
                        uploads_enabled=True, initial_sync_status="complete", is_full_sync=True)
    session.add(database)
    session.commit()
    return database


def uploads_database(session: Session) -> tuple[Database, str | None, str]:
    settings = _settings(session)
    db_id = settings.get("db_id")
    if db_id is None:
        return _default_database(session), None, TABLE_PREFIX
    database = session.get(Database, db_id)
    if database is None:
        raise Invalid("The uploads database configured in uploads-settings does not exist.")
    persistence.check_supported(database)
    return database, settings.get("schema_name") or None, settings.get("table_prefix") or ""


def _table_name(prefix: str, filename: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", Path(filename or "upload").stem.lower()).strip("_")[:40] or "upload"
    return f"{prefix}{stem}_{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%d%H%M%S%f')}"


def _display(filename: str) -> str:
    stem = Path(filename or "Upload").stem
    return re.sub(r"[_\-]+", " ", stem).strip().title() or "Upload"


def from_csv(session: Session, user: User, filename: str, data: bytes, collection_id: int | None) -> int:
    _check_collection(session, user, collection_id)
    parsed = csvfile.parse(data)
    database, schema, prefix = uploads_database(session)
    if not perms.can_query(session, user, database.id, native=True):
        raise Forbidden()
    name = _table_name(prefix, filename)
    metadata = sa.MetaData()
    # Row ids are given explicitly (1..n): the same on every engine, no sequence needed.
    columns = [sa.Column(csvfile.ROW_ID, sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
                         autoincrement=False)]
    columns += [sa.Column(n, _sa_type(t)) for n, t in zip(parsed.names, parsed.types)]
    table = sa.Table(name, metadata, *columns, schema=schema, quote=True)
    try:
        with persistence.writable(database) as conn:
            table.create(conn)
            for start in range(0, len(parsed.rows), 1000):
                conn.execute(table.insert(), [{csvfile.ROW_ID: start + i + 1, **dict(zip(parsed.names, row))}
                                              for i, row in enumerate(parsed.rows[start:start + 1000])])
    except sa.exc.SQLAlchemyError as exc:
        original = getattr(exc, "orig", None) or exc
        raise Invalid(f"The upload could not be written: {str(original).splitlines()[0]}") from None
    try:
        card_id = _register(session, user, database, schema, name, filename, parsed, collection_id)
    except BaseException:
        session.rollback()
        persistence.drop(database, schema, name)
        raise
    # The rows above make the model usable at once; a sync then adds fingerprints, semantic types
    # and field values, in the background as after any schema change.
    from core.sync import schema as sync

    sync.start(database.id)
    return card_id


def _sa_type(base_type: str):
    return persistence.column_type(base_type)


def _register(session: Session, user: User, database: Database, schema: str | None, name: str, filename: str,
              parsed: csvfile.Parsed, collection_id: int | None) -> int:
    from core.query import processor as card_queries

    display = _display(filename)
    table = Table(db_id=database.id, schema=schema, name=name, display_name=display, is_upload=True,
                  initial_sync_status="complete", estimated_row_count=len(parsed.rows), entity_id=_entity_id())
    session.add(table)
    session.flush()
    fields = [(csvfile.ROW_ID, "ID", "type/BigInteger", "type/PK")]
    fields += [(n, d, t, None) for n, d, t in zip(parsed.names, parsed.display_names, parsed.types)]
    for position, (field_name, field_display, base, semantic) in enumerate(fields):
        session.add(Field(table_id=table.id, name=field_name, display_name=field_display, base_type=base,
                          effective_type=base, semantic_type=semantic, database_type=_db_type(base),
                          position=position, database_position=position, entity_id=_entity_id(),
                          visibility_type="normal", has_field_values=None))
    session.flush()
    query = {"database": database.id, "type": "query", "query": {"source-table": table.id}}
    card = Card(name=display, display="table", dataset_query=query, visualization_settings={}, type="model",
                collection_id=collection_id, creator_id=user.id, database_id=database.id, table_id=table.id,
                query_type="query", entity_id=_entity_id())
    session.add(card)
    session.flush()
    card.result_metadata = card_queries.result_metadata(session, user, query)
    _record(session, user, card, creation=True)
    session.commit()
    events.emit("card-create", user.id, card)
    return card.id


def _db_type(base_type: str) -> str:
    return {"type/BigInteger": "BIGINT", "type/Float": "DOUBLE", "type/Boolean": "BOOLEAN", "type/Date": "DATE",
            "type/DateTime": "TIMESTAMP"}.get(base_type, "TEXT")
