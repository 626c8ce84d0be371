"""The data permission graphs (v1 and v2) and the execution graph: reading and batch updates.

Stored rows are v2 (core.appdb.models.permissions). v1 is a view of them and a v1 PUT is translated to v2
first. A PUT overlays only the entries sent: for a database set table by table, the tables not named
keep their values. Each PUT is one transaction that starts by taking the next revision.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from core.appdb.models import (
    ADMIN_GROUP_ID,
    Database,
    DataPermission,
    PermissionsGroup,
    Table,
    User,
)
from core.appdb.models.permissions import DATA_GRAPH, DATA_PERM_VALUES, EXECUTION_GRAPH
from core.assembly import events
from core.assembly.records import SandboxChange
from core.http.errors import Invalid, PaymentRequired, check_404

from . import revisions

V2_TYPES = ("view-data", "create-queries", "download", "data-model", "details")
WRAPPED = ("download", "data-model")  # sent and shown as {"schemas": value}
GRANULAR = ("view-data", "create-queries", "download", "data-model")
ADMIN_V2 = {"view-data": "unrestricted", "create-queries": "query-builder-and-native", "download": "full",
            "data-model": "all", "details": "yes"}
PAID_VALUES = ("sandboxed", "impersonated")


class SandboxesUnavailable(PaymentRequired):
    message = "Sandboxes and connection impersonation are not available in Tessera."


def _sandboxes_hook():
    """The apply_sandboxes hook when a plugin stores sandboxes (plugins.sandboxes), else None: then a
    "sandboxed" value or a `sandboxes` key is answered 402, as Metabase's open edition does."""
    from flask import current_app

    try:
        hook = current_app.extensions["tessera"].pm.hook.apply_sandboxes
    except (RuntimeError, KeyError):
        return None
    return hook if hook.get_hookimpls() else None


def _sandbox_changes(entries: Any) -> list[SandboxChange]:
    if not isinstance(entries, list):
        raise invalid("sandboxes must be a list.")
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise invalid("each sandbox must be a map.")
        ids = {}
        for key in ("group_id", "table_id", "card_id", "id"):
            value = entry.get(key)
            if value is not None:
                ids[key] = _int_key(value, key.replace("_id", ""))
        if "group_id" not in ids or "table_id" not in ids:
            raise invalid("each sandbox needs a group_id and a table_id.")
        remappings = entry.get("attribute_remappings") or {}
        if not isinstance(remappings, dict):
            raise invalid("attribute_remappings must be a map.")
        out.append(SandboxChange(attribute_remappings=remappings, **ids))
    return out


def invalid(detail: str) -> Invalid:
    return Invalid(f"Cannot parse permissions graph because it is invalid: {detail}")


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------


class Catalog:
    """Databases and their tables (id -> schema, "" for none), read once per request."""

    def __init__(self, session: Session, db_ids: list[int] | None = None):
        query = select(Database.id).order_by(Database.id)
        if db_ids is not None:
            query = query.where(Database.id.in_(db_ids))
        self.db_ids = list(session.scalars(query))
        self.tables: dict[int, dict[int, str]] = {db_id: {} for db_id in self.db_ids}
        for table_id, db_id, schema in session.execute(
                select(Table.id, Table.db_id, Table.schema).where(Table.db_id.in_(self.db_ids))):
            self.tables[db_id][table_id] = schema or ""

    def schemas(self, db_id: int) -> set[str]:
        return set(self.tables[db_id].values())


def _rows(session: Session, group_ids: list[int], db_ids: list[int], perm_types) -> dict:
    out: dict[tuple, dict] = {}
    for row in session.scalars(select(DataPermission).where(
            DataPermission.group_id.in_(group_ids), DataPermission.db_id.in_(db_ids),
            DataPermission.perm_type.in_(perm_types))):
        entry = out.setdefault((row.group_id, row.db_id, row.perm_type), {"db": None, "tables": {}})
        if row.table_id is None:
            entry["db"] = row.perm_value
        else:
            entry["tables"][row.table_id] = row.perm_value
    return out


def _expand(entry: dict | None, perm_type: str, tables: dict[int, str]) -> dict[int, str]:
    least = DATA_PERM_VALUES[perm_type][-1]
    if entry is None:
        return {tid: least for tid in tables}
    if entry["db"] is not None:
        return {tid: entry["db"] for tid in tables}
    return {tid: entry["tables"].get(tid, least) for tid in tables}


def _render(entry: dict | None, perm_type: str, tables: dict[int, str]) -> Any:
    """A value as the graph shows it: one string, or {schema: string | {table_id: string}}."""
    least = DATA_PERM_VALUES[perm_type][-1]
    if entry is None:
        return least
    if entry["db"] is not None or not tables:
        return entry["db"] or least
    values = _expand(entry, perm_type, tables)
    by_schema: dict[str, dict[int, str]] = {}
    for tid, schema in sorted(tables.items()):
        by_schema.setdefault(schema, {})[tid] = values[tid]
    rendered = {schema: (next(iter(vals.values())) if len(set(vals.values())) == 1 else vals)
                for schema, vals in by_schema.items()}
    flat = set(v for v in rendered.values() if isinstance(v, str))
    if len(flat) == 1 and all(isinstance(v, str) for v in rendered.values()):
        return flat.pop()
    return rendered


def _v2_entry(rows: dict, group_id: int, db_id: int, tables: dict[int, str]) -> dict:
    if group_id == ADMIN_GROUP_ID:
        values = dict(ADMIN_V2)
    else:
        values = {t: _render(rows.get((group_id, db_id, t)), t, tables) for t in V2_TYPES}
    return {t: ({"schemas": v} if t in WRAPPED else v) for t, v in values.items()}


def _v1_entry(v2: dict) -> dict:
    view, queries = v2["view-data"], v2["create-queries"]
    download = v2["download"]["schemas"]
    if view == "blocked":
        data = {"native": "none", "schemas": "block"}
    elif isinstance(queries, str):
        data = {"native": "write" if queries == "query-builder-and-native" else "none",
                "schemas": "none" if queries == "no" else "all"}
    else:
        data = {"native": "none", "schemas": {
            schema: ("all" if v != "no" else "none") if isinstance(v, str)
            else {tid: ("all" if tv != "no" else "none") for tid, tv in v.items()}
            for schema, v in queries.items()}}
    native_download = download if isinstance(download, str) and data["native"] == "write" else "none"
    return {"data": data, "download": {"native": native_download, "schemas": download},
            "data-model": v2["data-model"], "details": v2["details"]}


def data_graph(session: Session, version: int = 2, group_ids: list[int] | None = None,
               db_ids: list[int] | None = None) -> dict:
    """{revision, groups: {group_id: {db_id: permissions}}} for every group and database (or a subset)."""
    catalog = Catalog(session, db_ids)
    query = select(PermissionsGroup.id).order_by(PermissionsGroup.id)
    if group_ids is not None:
        query = query.where(PermissionsGroup.id.in_(group_ids))
    groups = list(session.scalars(query))
    rows = _rows(session, groups, catalog.db_ids, V2_TYPES)
    out: dict[int, dict] = {}
    for group_id in groups:
        per_db = {}
        for db_id in catalog.db_ids:
            entry = _v2_entry(rows, group_id, db_id, catalog.tables[db_id])
            per_db[db_id] = _v1_entry(entry) if version == 1 else entry
        out[group_id] = per_db
    return {"revision": revisions.current(session, DATA_GRAPH), "groups": out}


def data_graph_of(session: Session, db_id: int | None = None, group_id: int | None = None) -> dict:
    """The v2 graph of one database (every group) or of one group (every database); 404 if absent."""
    if db_id is not None:
        check_404(session.get(Database, db_id))
        return data_graph(session, 2, db_ids=[db_id])
    check_404(session.get(PermissionsGroup, group_id))
    return data_graph(session, 2, group_ids=[group_id])


def execution_graph(session: Session, group_ids: list[int] | None = None) -> dict:
    catalog = Catalog(session)
    groups = list(session.scalars(select(PermissionsGroup.id).order_by(PermissionsGroup.id)))
    rows = _rows(session, groups, catalog.db_ids, ("execute",))
    out = {}
    for group_id in groups if group_ids is None else [g for g in groups if g in group_ids]:
        out[group_id] = {db_id: "all" if group_id == ADMIN_GROUP_ID else
                         _render(rows.get((group_id, db_id, "execute")), "execute", {})
                         for db_id in catalog.db_ids}
    return {"revision": revisions.current(session, EXECUTION_GRAPH), "groups": out}


# --------------------------------------------------------------------------------------------------
# Parsing a PUT
# --------------------------------------------------------------------------------------------------


def _int_key(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise invalid(f"{what} {value!r} is not an integer id.") from None
    if number <= 0:
        raise invalid(f"{what} {value!r} is not a positive id.")
    return number


def _check_value(perm_type: str, value: Any) -> str:
    if not isinstance(value, str) or value not in DATA_PERM_VALUES[perm_type]:
        raise invalid(f"{value!r} is not a valid {perm_type} value.")
    if value in PAID_VALUES and (value != "sandboxed" or _sandboxes_hook() is None):
        raise SandboxesUnavailable()
    return value


def _overlay(perm_type: str, value: Any, tables: dict[int, str]) -> tuple[str, Any]:
    """("db", value) for a whole-database value, ("tables", {table_id: value}) for a granular one."""
    if isinstance(value, str):
        return "db", _check_value(perm_type, value)
    if perm_type not in GRANULAR or not isinstance(value, dict):
        raise invalid(f"{value!r} is not a valid {perm_type} value.")
    schemas = set(tables.values())
    out: dict[int, str] = {}
    for schema, schema_value in value.items():
        if schema not in schemas:
            raise invalid(f"the database has no schema {schema!r}.")
        in_schema = [tid for tid, s in tables.items() if s == schema]
        if isinstance(schema_value, str):
            for tid in in_schema:
                out[tid] = _check_value(perm_type, schema_value)
        elif isinstance(schema_value, dict):
            for table_key, table_value in schema_value.items():
                tid = _int_key(table_key, "table")
                if tid not in in_schema:
                    raise invalid(f"table {tid} is not in schema {schema!r} of the database.")
                out[tid] = _check_value(perm_type, table_value)
        else:
            raise invalid(f"{schema_value!r} is not a valid {perm_type} value.")
    if perm_type == "create-queries" and "query-builder-and-native" in out.values():
        raise invalid("native queries can be allowed only for a whole database.")
    return "tables", out


def _unwrap(perm_type: str, value: Any) -> Any:
    if perm_type in WRAPPED:
        if not isinstance(value, dict) or "schemas" not in value:
            raise invalid(f"{perm_type} must be a map with the key schemas.")
        return value["schemas"]
    return value


def _from_v1(entry: dict) -> dict:
    """A v1 database entry as v2 values (download and data-model unwrapped)."""
    out: dict[str, Any] = {}
    data = entry.get("data")
    if data is not None:
        if not isinstance(data, dict):
            raise invalid("data must be a map.")
        native, schemas = data.get("native", "none") or "none", data.get("schemas", "none")
        if native not in ("write", "none"):
            raise invalid(f"{native!r} is not a valid native value.")
        if native == "write" and schemas != "all":
            raise Invalid("Invalid DB permissions: If you have write access for native queries, you must have "
                          "data access to all schemas.")
        if schemas == "block":
            out["view-data"], out["create-queries"] = "blocked", "no"
        elif schemas in ("all", "none"):
            out["view-data"] = "unrestricted"
            out["create-queries"] = ("query-builder-and-native" if native == "write" else "query-builder") \
                if schemas == "all" else "no"
        elif isinstance(schemas, dict):
            out["view-data"] = "unrestricted"
            out["create-queries"] = {schema: _v1_table_value(v) if isinstance(v, str) else
                                     {tid: _v1_table_value(tv) for tid, tv in v.items()}
                                     if isinstance(v, dict) else _v1_table_value(v)
                                     for schema, v in schemas.items()}
        else:
            raise invalid(f"{schemas!r} is not a valid schemas value.")
    if "download" in entry:
        download = entry["download"]
        if not isinstance(download, dict):
            raise invalid("download must be a map.")
        if "schemas" in download:
            out["download"] = download["schemas"]
    for key in ("data-model", "details"):
        if key in entry:
            out[key] = _unwrap(key, entry[key]) if key in WRAPPED else entry[key]
    return out


def _v1_table_value(value: Any) -> str:
    if isinstance(value, dict):
        if value.get("query") == "segmented":
            raise SandboxesUnavailable()
        raise invalid(f"{value!r} is not a valid table value.")
    if value == "all":
        return "query-builder"
    if value == "none":
        return "no"
    raise invalid(f"{value!r} is not a valid table value.")


def _parse_groups(session: Session, groups: Any) -> dict[int, Any]:
    if not isinstance(groups, dict):
        raise invalid("groups must be a map.")
    known = set(session.scalars(select(PermissionsGroup.id)))
    out = {}
    for key, value in groups.items():
        group_id = _int_key(key, "group")
        if group_id not in known:
            raise invalid(f"there is no group {group_id}.")
        out[group_id] = value
    return out


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------


def _wanted(overlay: tuple[str, Any], perm_type: str, tables: dict[int, str], current: dict | None) -> dict:
    """The rows one (group, database, type) should have after the overlay: {table_id | None: value}."""
    kind, value = overlay
    if kind == "db":
        return {None: value}
    expanded = _expand(current, perm_type, tables)
    expanded.update(value)
    distinct = set(expanded.values())
    return {None: distinct.pop()} if len(distinct) == 1 else expanded


def _as_entry(wanted: dict) -> dict:
    return {"db": wanted.get(None), "tables": {t: v for t, v in wanted.items() if t is not None}}


def _check_constraints(group_id: int, db_id: int, view: dict | None, queries: dict | None,
                       tables: dict[int, str]) -> None:
    """Native queries need data access that is not blocked, for the whole database."""
    if queries is None or queries["db"] != "query-builder-and-native":
        return
    sandboxed = view is not None and (view["db"] == "sandboxed" or (
        view["db"] is None and "sandboxed" in _expand(view, "view-data", tables).values()))
    if sandboxed:
        raise invalid(f"group {group_id} cannot have native query access to database {db_id} while its data "
                      "access is sandboxed.")
    blocked = (view is None or view["db"] == "blocked"
               or (view["db"] is None and "blocked" in _expand(view, "view-data", tables).values()))
    if blocked:
        raise invalid(f"group {group_id} cannot have native query access to database {db_id} while its data "
                      "access is blocked.")


def _write_rows(session: Session, changes: dict[tuple[int, int, str], dict], tables_of: dict[int, dict]) -> None:
    """Replace the rows of every changed (group, database, type), in bulk."""
    by_entry: dict[tuple[int, int], list[str]] = {}
    for group_id, db_id, perm_type in changes:
        by_entry.setdefault((group_id, db_id), []).append(perm_type)
    for (group_id, db_id), perm_types in by_entry.items():
        session.execute(delete(DataPermission).where(
            DataPermission.group_id == group_id, DataPermission.db_id == db_id, DataPermission.perm_type.in_(perm_types)))
    rows = [{"group_id": group_id, "db_id": db_id, "perm_type": perm_type, "perm_value": value, "table_id": table_id,
             "schema_name": None if table_id is None else tables_of[db_id][table_id]}
            for (group_id, db_id, perm_type), wanted in changes.items() for table_id, value in wanted.items()]
    if rows:
        session.execute(insert(DataPermission), rows)


def put_data_graph(session: Session, user: User, body: dict, force: bool) -> tuple[dict, int, int]:
    """Apply a v1 or v2 graph fragment. Returns (the graph of the groups sent, revision, version)."""
    hook = _sandboxes_hook()
    if (body.get("sandboxes") is not None and hook is None) or body.get("impersonations") is not None:
        raise SandboxesUnavailable()
    sandboxes = _sandbox_changes(body["sandboxes"]) if body.get("sandboxes") is not None else []
    groups = _parse_groups(session, body.get("groups"))
    revision = revisions.bump(session, DATA_GRAPH, None if force else body["revision"], user,
                              {"groups": body.get("groups")})
    try:
        version = _apply_data_groups(session, groups)
        if hook is not None:
            # The sandboxes sent, and those whose group is no longer sandboxed removed, in this transaction.
            hook(session=session, user=user, changes=sandboxes)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    events.emit("permissions-graph-update", user.id, None, graph="data", revision=revision, groups=sorted(groups))
    return data_graph(session, version, group_ids=list(groups)), revision, version


def _apply_data_groups(session: Session, groups: dict[int, Any]) -> int:
    """Validate every entry and compute every change in memory, then write them all."""
    catalog = Catalog(session)
    current = _rows(session, list(groups), catalog.db_ids, (*V2_TYPES,))
    changes: dict[tuple[int, int, str], dict] = {}
    version = 2
    for group_id, per_db in groups.items():
        if not isinstance(per_db, dict):
            raise invalid(f"the permissions of group {group_id} must be a map of databases.")
        if group_id == ADMIN_GROUP_ID:
            continue  # administrators always hold every right
        for db_key, entry in per_db.items():
            db_id = _int_key(db_key, "database")
            if db_id not in catalog.tables:
                raise invalid(f"there is no database {db_id}.")
            if not isinstance(entry, dict):
                raise invalid(f"the permissions of group {group_id} on database {db_id} must be a map.")
            if "data" in entry:
                version = 1
                values = _from_v1(entry)
            else:
                values = {t: _unwrap(t, entry[t]) for t in V2_TYPES if t in entry}
            tables = catalog.tables[db_id]
            for perm_type, value in values.items():
                key = (group_id, db_id, perm_type)
                wanted = _wanted(_overlay(perm_type, value, tables), perm_type, tables, current.get(key))
                changes[key] = wanted
                current[key] = _as_entry(wanted)
            _check_constraints(group_id, db_id, current.get((group_id, db_id, "view-data")),
                               current.get((group_id, db_id, "create-queries")), tables)
    _write_rows(session, changes, catalog.tables)
    return version


def put_execution_graph(session: Session, user: User, body: dict, force: bool) -> dict:
    groups = _parse_groups(session, body.get("groups"))
    revisions.bump(session, EXECUTION_GRAPH, None if force else body["revision"], user, {"groups": body.get("groups")})
    try:
        db_ids = set(session.scalars(select(Database.id)))
        changes: dict[tuple[int, int, str], dict] = {}
        for group_id, value in groups.items():
            if group_id == ADMIN_GROUP_ID:
                continue
            per_db = {db_id: value for db_id in db_ids} if isinstance(value, str) else value
            if not isinstance(per_db, dict):
                raise invalid(f"the execution permissions of group {group_id} must be all, none or a map.")
            for db_key, db_value in per_db.items():
                db_id = _int_key(db_key, "database")
                if db_id not in db_ids:
                    raise invalid(f"there is no database {db_id}.")
                changes[(group_id, db_id, "execute")] = {None: _check_value("execute", db_value)}
        _write_rows(session, changes, {})
        session.commit()
    except BaseException:
        session.rollback()
        raise
    events.emit("permissions-graph-update", user.id, None, graph="execution", groups=sorted(groups))
    return execution_graph(session)
