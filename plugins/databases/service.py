"""Databases plugin logic: registering, changing and removing databases, and what each caller sees.

Connection details are validated by the driver's strict model, checked by connecting, stored
encrypted and shown masked, only to those who manage the database. Sync runs in the background
(core.sync.schema); these functions only start it.
"""
from __future__ import annotations

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from core.appdb.models import Card, Database, Field, Segment, Table, User
from core.appdb.models.base import new_entity_id
from core.content import segments
from core.content.metadata import (
    database_json,
    field_json,
    ordered_fields,
    schedules_json,
    table_json,
)
from core.driver import connections, crypto
from core.http.errors import Invalid, NotFound, check_404
from core.policy import data_access
from core.sync import field_values, sample_data
from core.sync import schema as sync
from core.sync.humanize import STRATEGIES
from core.sync.schedules import schedule_to_cron

AUTOCOMPLETE_LIMIT = 50
HIDDEN_TABLES = ("hidden", "technical", "cruft")


def valid_strategy(value: str) -> str:
    if value not in STRATEGIES:
        raise Invalid({"value": "humanization-strategy must be one of " + ", ".join(STRATEGIES) + "."})
    return value


# --------------------------------------------------------------------------------------------------
# Showing databases
# --------------------------------------------------------------------------------------------------


def _driver(state, engine: str):
    return state.drivers.get(engine)


def _details(session: Session, state, user: User, database: Database) -> dict | None:
    if not data_access.can_manage(session, user, database.id):
        return None
    try:
        details = crypto.decrypt_details(database.details) if database.details else {}
    except ValueError:
        details = {}
    return crypto.mask_details(_driver(state, database.engine), details)


def _json(session: Session, state, user: User, database: Database) -> dict:
    data = database_json(database, _driver(state, database.engine), _details(session, state, user, database))
    data["native_permissions"] = data_access.native_permissions(session, user, database.id)
    return data


def _blocked_json(session: Session, user: User, database: Database) -> dict:
    """A database the user may not read: its name, id and the tables they may still see."""
    tables = [table_json(t) for t in visible_tables(session, database.id, user=user)]
    return data_access.restrict_blocked({"id": database.id, "name": database.name, "tables": tables})


def visible_tables(session: Session, database_id: int, include_hidden: bool = False,
                   include_inactive: bool = False, user: User | None = None, editable: bool = False) -> list[Table]:
    """Tables of a database, without hidden or inactive ones unless asked; with `user`, only those
    that user may read, or with `editable` (the data model editor's listings) those whose data model
    they may edit."""
    query = select(Table).where(Table.db_id == database_id)
    if not include_inactive:
        query = query.where(Table.active.is_(True))
    if not include_hidden:
        query = query.where(or_(Table.visibility_type.is_(None), Table.visibility_type.not_in(HIDDEN_TABLES)))
    tables = list(session.scalars(query))
    if user is not None and editable:
        tables = [t for t in tables if data_access.can_edit_data_model(session, user, database_id, t.id)]
    elif user is not None:
        tables = data_access.readable_tables(session, user, database_id, tables)
    return sorted(tables, key=lambda t: ((t.schema or "").lower(), (t.display_name or t.name).lower(), t.id))


def list_databases(session: Session, state, user: User, include_tables: bool, editable_only: bool,
                   exclude_uneditable: bool, only_uploadable: bool, include_analytics: bool) -> dict:
    databases = sorted(session.scalars(select(Database)), key=lambda d: (d.name.lower(), d.engine, d.id))
    data = []
    for database in databases:
        if database.is_audit and not include_analytics:
            continue
        if only_uploadable and not database.uploads_enabled:
            continue
        if editable_only and not data_access.can_edit_data_model(session, user, database.id):
            continue
        if exclude_uneditable and not data_access.can_manage(session, user, database.id):
            continue
        if not data_access.can_read(session, user, database.id):
            continue
        item = _json(session, state, user, database)
        if include_tables:
            item["tables"] = [table_json(t, schema_as_string=True) for t in visible_tables(session, database.id, user=user)]
        data.append(item)
    return {"data": data, "total": len(data)}


def get_database(session: Session, state, user: User, database_id: int, include: str | None,
                 editable_only: bool = False, exclude_uneditable: bool = False) -> dict:
    database = check_404(session.get(Database, database_id))
    if editable_only:
        data_access.check_edit_data_model(session, user, database_id)
    if exclude_uneditable:
        data_access.check_manage(session, user, database_id)
    if not data_access.can_read(session, user, database_id):
        return _blocked_json(session, user, database)
    data = _json(session, state, user, database)
    data["schedules"] = schedules_json(database)
    if data_access.can_manage(session, user, database_id):
        data["can-manage"] = True
    if include in ("tables", "tables.fields"):
        tables = visible_tables(session, database_id, user=user, editable=editable_only)
        data["tables"] = []
        fields_by_table = _fields_by_table(session, [t.id for t in tables], include_sensitive=False) \
            if include == "tables.fields" else {}
        targets = _targets(session, fields_by_table)
        for table in tables:
            item = table_json(table, schema_as_string=True)
            if include == "tables.fields":
                item["fields"] = [_with_target(f, targets) for f in ordered_fields(table, fields_by_table.get(table.id, []))]
            data["tables"].append(item)
    return data


def _fields_by_table(session: Session, table_ids: list[int], include_sensitive: bool,
                     include_inactive: bool = False) -> dict[int, list[Field]]:
    if not table_ids:
        return {}
    query = select(Field).where(Field.table_id.in_(table_ids))
    if not include_inactive:
        query = query.where(Field.active.is_(True))
    if not include_sensitive:
        query = query.where(Field.visibility_type != "sensitive")
    grouped: dict[int, list[Field]] = {}
    for field in session.scalars(query):
        grouped.setdefault(field.table_id, []).append(field)
    return grouped


def _targets(session: Session, fields_by_table: dict[int, list[Field]]) -> dict[int, Field]:
    ids = {f.fk_target_field_id for fields in fields_by_table.values() for f in fields if f.fk_target_field_id}
    if not ids:
        return {}
    return {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(ids)))}


def _with_target(field: Field, targets: dict[int, Field]) -> dict:
    data = field_json(field)
    target = targets.get(field.fk_target_field_id) if field.fk_target_field_id else None
    data["target"] = field_json(target) if target is not None else None
    return data


def metadata(session: Session, state, user: User, database_id: int, include_hidden: bool,
             remove_inactive: bool, skip_fields: bool, editable_only: bool = False) -> dict:
    """GET /api/database/:id/metadata: the database with its tables and their fields."""
    database = check_404(session.get(Database, database_id))
    if editable_only:
        data_access.check_edit_data_model(session, user, database_id)
    if not data_access.can_read(session, user, database_id):
        return _blocked_json(session, user, database)
    data = _json(session, state, user, database)
    tables = visible_tables(session, database_id, include_hidden=include_hidden, include_inactive=not remove_inactive,
                            user=user, editable=editable_only)
    fields_by_table = {} if skip_fields else _fields_by_table(
        session, [t.id for t in tables], include_sensitive=include_hidden, include_inactive=not remove_inactive)
    targets = _targets(session, fields_by_table)
    data["tables"] = []
    table_ids = [t.id for t in tables]
    table_segments = segments.table_segments(session, table_ids)
    table_metrics = segments.table_metrics(session, user, table_ids)
    for table in tables:
        item = table_json(table)
        item["fields"] = [] if skip_fields else [
            _with_target(f, targets) for f in ordered_fields(table, fields_by_table.get(table.id, []))]
        item["segments"] = table_segments[table.id]
        item["metrics"] = table_metrics[table.id]
        data["tables"].append(item)
    return data


# --------------------------------------------------------------------------------------------------
# Registering and changing databases
# --------------------------------------------------------------------------------------------------


def _check_engine(state, engine: str) -> None:
    if engine not in state.drivers:
        raise Invalid({"engine": "value must be a valid database engine."},
                      {"engine": [f"value must be a valid database engine., received: \"{engine}\""]})


def _connectable_details(state, engine: str, details: dict) -> dict:
    """The details as stored: parsed by the driver's model, checked by connecting (400 otherwise).

    They are kept as the user gave them: the resolved file path is what is checked here and on every
    connection, but a relative path is stored (and shown) relative, since clients such as dbt-metabase
    find their database again by the details they registered."""
    connections.validate_details(engine, details)
    connections.can_connect(engine, details)
    return connections.parse_details(_driver(state, engine), details).plain()


def _apply_schedules(database: Database, schedules: dict | None) -> None:
    if not schedules:
        return
    if not isinstance(schedules, dict):
        raise Invalid({"schedules": "value must be a map of schedules."})
    if schedules.get("metadata_sync"):
        database.metadata_sync_schedule = schedule_to_cron(schedules["metadata_sync"], "schedules")
    if schedules.get("cache_field_values"):
        database.cache_field_values_schedule = schedule_to_cron(schedules["cache_field_values"], "schedules")


def create_database(session: Session, state, user: User, body) -> dict:
    _check_engine(state, body.engine)
    details = _connectable_details(state, body.engine, body.details)
    database = Database(name=body.name, engine=body.engine, details=crypto.encrypt_details(details),
                        creator_id=user.id, initial_sync_status="incomplete", entity_id=new_entity_id())
    for key in ("is_full_sync", "is_on_demand", "auto_run_queries", "cache_ttl", "refingerprint",
                "description", "caveats", "points_of_interest", "settings", "connection_source"):
        value = getattr(body, key, None)
        if value is not None and hasattr(Database, key):
            setattr(database, key, value)
    _apply_schedules(database, body.schedules)
    session.add(database)
    session.commit()
    sync.start(database.id)
    return _json(session, state, user, database)


UPDATABLE = ("name", "description", "caveats", "points_of_interest", "auto_run_queries", "cache_ttl",
             "refingerprint", "is_full_sync", "is_on_demand")


def merged_settings(stored: dict | None, sent: dict | None) -> dict | None:
    """A PUT's settings patch the stored map (as Metabase does): keys not sent stay, a key sent as null
    goes, and no map at all changes nothing. Enabling actions must not drop the other settings."""
    if sent is None:
        return stored
    merged = {**(stored or {}), **sent}
    return {key: value for key, value in merged.items() if value is not None}


def update_database(session: Session, state, user: User, database_id: int, body) -> dict:
    sent = body.model_fields_set
    # The row is locked while its settings are merged, so two PUTs of different keys both count.
    database = check_404(session.get(Database, database_id, with_for_update="settings" in sent or None,
                                     populate_existing="settings" in sent))
    data_access.check_manage(session, user, database_id)
    engine = body.engine if "engine" in sent and body.engine else database.engine
    if engine != database.engine:
        _check_engine(state, engine)
    if "details" in sent and body.details is not None or engine != database.engine:
        old = crypto.decrypt_details(database.details) if database.details else {}
        new = body.details if body.details is not None else old
        merged = crypto.merge_masked(_driver(state, engine), old, new)
        database.details = crypto.encrypt_details(_connectable_details(state, engine, merged))
        database.engine = engine
        connections.dispose(database_id)
    for key in UPDATABLE:
        if key in sent:
            value = getattr(body, key)
            if key == "name" and value is None:
                continue
            if key in ("is_full_sync", "is_on_demand", "auto_run_queries") and value is None:
                continue
            setattr(database, key, bool(value) if key in ("is_full_sync", "is_on_demand") else value)
    if "settings" in sent:
        database.settings = merged_settings(database.settings, body.settings)
    if "schedules" in sent:
        _apply_schedules(database, body.schedules)
    session.commit()
    return get_database(session, state, user, database_id, None)


def delete_database(session: Session, user: User, database_id: int) -> None:
    database = check_404(session.get(Database, database_id))
    session.delete(database)
    session.commit()
    connections.dispose(database_id)


def validate(state, engine: str, details: dict) -> dict:
    """POST /api/database/validate: whether a connection can be made with these details."""
    _check_engine(state, engine)
    try:
        connections.can_connect(engine, details)
    except Invalid as error:
        body = error.body if isinstance(error.body, dict) else {}
        return {"valid": False, "message": body.get("message", error.message)}
    return {"valid": True}


def add_sample_database(session: Session, state, user: User | None, background: bool = True) -> dict | Database:
    """The Sample Database, registered (and synced in the background) on first call."""
    existing = session.scalar(select(Database).where(Database.is_sample.is_(True)).order_by(Database.id))
    if existing is None:
        path = sample_data.ensure(state.config["TESSERA_DATA_DIR"])
        existing = Database(name=sample_data.NAME, engine="sqlite", is_sample=True,
                            details=crypto.encrypt_details({"db": str(path)}),
                            creator_id=user.id if user else None, initial_sync_status="incomplete",
                            entity_id=new_entity_id())
        session.add(existing)
        session.commit()
        if background:
            sync.start(existing.id)
    return _json(session, state, user, existing) if user is not None else existing


# --------------------------------------------------------------------------------------------------
# Sync and values
# --------------------------------------------------------------------------------------------------


def _managed(session: Session, user: User, database_id: int) -> Database:
    database = check_404(session.get(Database, database_id))
    data_access.check_manage(session, user, database_id)
    return database


def sync_schema(session: Session, user: User, database_id: int) -> dict:
    _managed(session, user, database_id)
    sync.start(database_id)
    return {"status": "ok"}


def rescan_values(session: Session, user: User, database_id: int) -> dict:
    _managed(session, user, database_id)
    sync.start(database_id, job="values")
    return {"status": "ok"}


def discard_values(session: Session, user: User, database_id: int) -> dict:
    _managed(session, user, database_id)
    field_ids = list(session.scalars(select(Field.id).join(Table, Field.table_id == Table.id).where(
        Table.db_id == database_id)))
    field_values.discard(session, field_ids)
    session.commit()
    return {"status": "ok"}


def dismiss_spinner(session: Session, user: User, database_id: int) -> dict:
    database = _managed(session, user, database_id)
    database.initial_sync_status = "complete"
    session.execute(update(Table).where(Table.db_id == database_id).values(initial_sync_status="complete"))
    session.commit()
    return {"status": "ok"}


def syncable_schemas(session: Session, user: User, database_id: int) -> list[str]:
    database = _managed(session, user, database_id)
    driver = connections.driver_for(database)
    try:
        schemas = driver.syncable_schemas(connections.engine_for(database))
    except Invalid:
        raise
    except Exception as exc:  # an unreachable database is the caller's problem to fix, not a crash
        raise Invalid(f"Cannot list the schemas of this database: {exc}") from exc
    return sorted(s for s in schemas if s)


def usage_info(session: Session, database_id: int) -> dict:
    check_404(session.get(Database, database_id))
    counts = dict(session.execute(select(Card.type, func.count()).where(Card.database_id == database_id)
                                  .group_by(Card.type)).all())
    return {"question": counts.get("question", 0), "dataset": counts.get("model", 0),
            "metric": counts.get("metric", 0), "segment": _segment_count(session, database_id)}


def _segment_count(session: Session, database_id: int) -> int:
    return session.scalar(select(func.count()).select_from(Segment).join(Table, Segment.table_id == Table.id)
                          .where(Table.db_id == database_id)) or 0


# --------------------------------------------------------------------------------------------------
# Listings: fields, schemas, autocomplete
# --------------------------------------------------------------------------------------------------


def _readable(session: Session, user: User, database_id: int) -> Database:
    database = check_404(session.get(Database, database_id))
    data_access.check_read(session, user, database_id)
    return database


def _active_fields(database_id: int):
    return (select(Field, Table).join(Table, Field.table_id == Table.id)
            .where(Table.db_id == database_id, Table.active.is_(True), Field.active.is_(True),
                   Field.visibility_type.not_in(("sensitive", "retired"))))


def fields(session: Session, user: User, database_id: int) -> list[dict]:
    _readable(session, user, database_id)
    rows = session.execute(_active_fields(database_id).order_by(Table.name, Field.database_position, Field.id))
    return [{"id": f.id, "name": f.name, "display_name": f.display_name, "base_type": f.base_type,
             "semantic_type": f.semantic_type, "table_name": t.name, "table_display_name": t.display_name,
             "table_schema": t.schema} for f, t in rows]


def idfields(session: Session, user: User, database_id: int, editable_only: bool) -> list[dict]:
    _readable(session, user, database_id)
    if editable_only:
        data_access.check_edit_data_model(session, user, database_id)
    rows = session.execute(_active_fields(database_id).where(Field.semantic_type == "type/PK")
                           .order_by(Table.name, Field.id))
    return [{**field_json(f), "table": table_json(t)} for f, t in rows]


def schemas(session: Session, user: User, database_id: int, include_hidden: bool, editable_only: bool) -> list[str]:
    _readable(session, user, database_id)
    if editable_only:
        data_access.check_edit_data_model(session, user, database_id)
    names = {t.schema or "" for t in visible_tables(session, database_id, include_hidden=include_hidden, user=user,
                                                    editable=editable_only)}
    return sorted(names)


def schema_tables(session: Session, user: User, database_id: int, schema: str | None, include_hidden: bool,
                  editable_only: bool) -> list[dict]:
    _readable(session, user, database_id)
    if editable_only:
        data_access.check_edit_data_model(session, user, database_id)
    wanted = schema or ""
    tables = [t for t in visible_tables(session, database_id, include_hidden=include_hidden, user=user,
                                        editable=editable_only) if (t.schema or "") == wanted]
    if not tables and wanted and wanted not in schemas(session, user, database_id, True, editable_only):
        raise NotFound()
    return [table_json(t, schema_as_string=True) for t in sorted(tables, key=lambda t: ((t.display_name or t.name).lower(), t.id))]


def _like(text: str) -> str:
    return text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def autocomplete(session: Session, user: User, database_id: int, prefix: str | None, substring: str | None) -> list:
    """Tables as [name, "Table"], fields as [name, "TABLE :base_type :semantic_type"]."""
    _readable(session, user, database_id)
    if substring:
        pattern = "%" + _like(substring) + "%"
    elif prefix:
        pattern = _like(prefix) + "%"
    else:
        raise Invalid({"prefix": "Either prefix or substring is required."})
    tables = session.scalars(
        select(Table).where(Table.db_id == database_id, Table.active.is_(True),
                            or_(Table.visibility_type.is_(None), Table.visibility_type.not_in(HIDDEN_TABLES)),
                            func.lower(Table.name).like(pattern, escape="\\"))
        .order_by(func.lower(Table.name)).limit(AUTOCOMPLETE_LIMIT))
    results: list[list[str]] = [[t.name, "Table"] for t in tables]
    remaining = AUTOCOMPLETE_LIMIT - len(results)
    if remaining > 0:
        rows = session.execute(
            _active_fields(database_id).where(
                or_(Table.visibility_type.is_(None), Table.visibility_type.not_in(HIDDEN_TABLES)),
                func.lower(Field.name).like(pattern, escape="\\"))
            .order_by(func.lower(Field.name), func.lower(Table.name)).limit(remaining))
        for f, t in rows:
            description = f"{t.name} :{f.base_type}" + (f" :{f.semantic_type}" if f.semantic_type else "")
            results.append([f.name, description])
    return results


def add_sample_on_first_start(app) -> None:
    """`tessera run` on an app DB that has never had a database: register the Sample Database."""
    from sqlalchemy.exc import IntegrityError

    from core.appdb.models import Setting

    state = app.extensions["tessera"]
    with app.app_context():
        with state.db.Session() as session:
            if session.get(Setting, MARKER) is not None or session.scalar(select(func.count()).select_from(Database)):
                return
            # The marker row is the mutex: of several starting processes one inserts it.
            session.add(Setting(key=MARKER, value="true"))
            try:
                session.commit()
            except IntegrityError:
                return
            database = add_sample_database(session, state, None, background=False)
            # Synced before the server forks its workers, so no thread is left behind in a fork.
            sync.sync_database(state, database.id)


MARKER = "tessera-sample-database-added"

