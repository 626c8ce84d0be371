"""Import: the files plan.py finds created or changed, written in one transaction: entities upserted
by entity_id (databases, tables and fields by name), never deleted; a dashboard's tabs and dashcards and a timeline's events are
part of their file and follow it. References resolve to this server's ids; one that does not resolve
is a problem naming the file and the reference, and any problem leaves the server unchanged."""
from __future__ import annotations

import datetime as dt
import json

import sqlalchemy as sa

from core.appdb.models import Base
from core.http.errors import Invalid

from . import export as ex
from . import kinds as k
from .plan import ImportProblem, Incoming, Report, compare, read
from .refs import Refs, Rewriter, Unresolved

# The order entities are written in: what a row needs exists before it (cards before the actions on them).
ORDER = ("Database", "Table", "Field", "FieldValues", "Collection", "NativeQuerySnippet", "Segment", "LegacyMetric",
         "Card", "Dashboard", "Action", "Timeline", "Setting")
DATA_MODEL = ("Database", "Table", "Field", "FieldValues")


# -------------------------------------------------------------------------------------------- writing

def run(session, files: dict[str, str], *, acting_user: int, registry, dry_run: bool = False) -> Report:
    """Compare and (unless dry_run or a problem) write; the caller's session is committed here on
    success and rolled back otherwise."""
    incoming, problems = read(files)
    report, _ = compare(session, incoming, registry)
    report.problems = problems + report.problems
    if report.ok:
        todo = [i for i in incoming if i.path in set(report.created) | set(report.changed)]
        try:
            _write(session, todo, set(report.created), acting_user, registry)
        except ImportProblem as exc:
            report.problems.append(str(exc))
    if report.ok and not dry_run:
        session.commit()
    else:
        session.rollback()
    return report


def _write(session, todo: list[Incoming], created: set[str], acting_user: int, registry) -> None:
    refs = Refs(session)
    ordered = sorted(todo, key=lambda i: (ORDER.index(i.key[0]), i.path.count("/"), i.path))
    lenient = Rewriter(refs, export=False, strict=False)
    strict = Rewriter(refs, export=False, strict=True)
    # First pass: a row for every new entity, its references to other new entities still open, so
    # that content may refer to content in any order (dashboards linking to each other).
    for item in ordered:
        if item.path in created and item.key[0] not in DATA_MODEL and item.key[0] != "Setting":
            _guard(item, lambda: _insert(session, item, lenient, acting_user))
    for item in ordered:
        _guard(item, lambda: _update(session, item, strict, acting_user, registry))


def _guard(item: Incoming, step) -> None:
    try:
        step()
    except Unresolved as exc:
        raise ImportProblem(f"{item.path}: {exc}") from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ImportProblem(f"{item.path}: cannot be read ({type(exc).__name__}: {exc})") from exc
    except sa.exc.IntegrityError as exc:
        raise ImportProblem(f"{item.path}: refused by the app DB ({exc.orig})") from exc
    except Invalid as exc:
        raise ImportProblem(f"{item.path}: {getattr(exc, 'errors', None) or exc}") from exc


def _table(name: str) -> sa.Table:
    return Base.metadata.tables[name]


def _location(session, refs: Refs, parent, strict: bool) -> str:
    if parent is None:
        return "/"
    parent_id = refs.to_local("collection", parent, strict)
    if parent_id is None:
        return "/"
    table = _table("collection")
    location = session.execute(sa.select(table.c.location).where(table.c.id == parent_id)).scalar_one()
    return f"{location}{parent_id}/"


def _insert(session, item: Incoming, rw: Rewriter, acting_user: int) -> None:
    kind = k.TOP_KINDS[item.key[0]]
    table = _table(kind.table)
    values = k.to_values(kind, item.data, rw, acting_user)
    for name, value in list(values.items()):
        if value is None and not table.c[name].nullable:
            if name in k.COLUMN_REFS and item.data.get(name) is not None:
                rw.refs.to_local(k.COLUMN_REFS[name], item.data[name])  # raises Unresolved, naming the reference
            del values[name]  # the column's default until the second pass
    values["entity_id"] = item.data["entity_id"]
    if "creator_id" in table.c and values.get("creator_id") is None:
        values["creator_id"] = acting_user
    if kind is k.COLLECTION:
        values["location"] = _location(session, rw.refs, item.data.get("parent_id"), False)
    row_id = session.execute(table.insert().values(**values).returning(table.c.id)).scalar_one()
    rw.refs.learn(kind.ref, row_id, item.data["entity_id"])


def _update(session, item: Incoming, rw: Rewriter, acting_user: int, registry) -> None:
    model = item.key[0]
    if model == "Setting":
        _settings(session, item, registry)
        return
    kind = k.TOP_KINDS[model]
    refs = rw.refs
    if model in DATA_MODEL:
        path = item.key[1]
        ref_kind = {"Database": "database", "Table": "table"}.get(model, "field")
        what = {"database": "database", "table": "table", "field": "field"}[ref_kind]
        target = path[0] if ref_kind == "database" else list(path)
        row_id = refs.to_local(ref_kind, target, strict=False)
        if row_id is None:
            raise ImportProblem(f"{item.path}: {what} {_ref_text(target)} not found on this server")
        if model == "FieldValues":
            _field_values(session, row_id, item, rw)
            return
        values = k.to_values(kind, item.data, rw, acting_user)
        if model == "Database" and item.data.get("details") is not None:
            values["details"] = _details(session, row_id, item.data["details"])
        if values:
            session.execute(_table(kind.table).update().where(_table(kind.table).c.id == row_id).values(**values))
        if model == "Field":
            _dimension(session, row_id, item, rw)
        return
    row_id = refs.to_local(kind.ref, item.data["entity_id"])
    values = k.to_values(kind, item.data, rw, acting_user)
    if kind is k.COLLECTION:
        values["location"] = _location(session, refs, item.data.get("parent_id"), True)
    table = _table(kind.table)
    session.execute(table.update().where(table.c.id == row_id).values(**values))
    if kind is k.DASHBOARD:
        _dashboard_parts(session, row_id, item, rw, acting_user)
    elif kind is k.TIMELINE:
        _events(session, row_id, item, rw, acting_user)
    elif kind is k.ACTION:
        part = k.ACTION_PARTS.get(item.data.get("type"))
        if part is not None:
            part_table = _table(part.table)
            part_values = k.to_values(part, item.data, rw, acting_user)
            exists = session.execute(sa.select(part_table.c.action_id).where(part_table.c.action_id == row_id)).first()
            if exists:
                session.execute(part_table.update().where(part_table.c.action_id == row_id).values(**part_values))
            else:
                session.execute(part_table.insert().values(action_id=row_id, **part_values))


def _details(session, database_id: int, details) -> str:
    """Connection details from a file, checked as a registration checks them (file paths, the app DB
    refused) before they are stored encrypted: an import is no way around the connection policy."""
    from core.driver import connections
    from core.driver.crypto import encrypt_details

    if not isinstance(details, dict):
        raise ValueError("details must be a mapping")
    table = _table("metabase_database")
    engine = session.execute(sa.select(table.c.engine).where(table.c.id == database_id)).scalar_one()
    connections.validate_details(engine, details)
    return encrypt_details(details)


def _ref_text(ref) -> str:
    return json.dumps(ref, ensure_ascii=False)


def _children(session, table: sa.Table, parent_column: str, parent_id: int, items: list[dict], kind: k.Kind,
              rw: Rewriter, acting_user: int, match, extra=None) -> dict:
    """Upsert a file's child rows and delete the parent's rows the file no longer lists; the ids by
    item index."""
    existing = session.execute(sa.select(table).where(table.c[parent_column] == parent_id)).all()
    by_key = {match(row._mapping): row.id for row in existing}
    kept, ids = set(), {}
    for index, item in enumerate(items):
        values = {**k.to_values(kind, item, rw, acting_user), **(extra(item) if extra else {})}
        if "entity_id" in table.c and item.get("entity_id"):
            values["entity_id"] = item["entity_id"]
        row_id = by_key.get(match(item))
        if row_id is None:
            row_id = session.execute(table.insert().values(**{parent_column: parent_id}, **values)
                                     .returning(table.c.id)).scalar_one()
        else:
            session.execute(table.update().where(table.c.id == row_id).values(**values))
        kept.add(row_id)
        ids[index] = row_id
    gone = [row.id for row in existing if row.id not in kept]
    if gone:
        session.execute(table.delete().where(table.c.id.in_(gone)))
    return ids


def _dashboard_parts(session, dashboard_id: int, item: Incoming, rw: Rewriter, acting_user: int) -> None:
    tabs = item.data.get("tabs") or []
    tab_ids = _children(session, _table("dashboard_tab"), "dashboard_id", dashboard_id, tabs, k.TAB, rw, acting_user,
                        lambda row: row.get("entity_id"))
    for index, tab in enumerate(tabs):
        rw.refs.learn("dashboard_tab", tab_ids[index], tab["entity_id"])
    dashcards = item.data.get("dashcards") or []
    ids = _children(session, _table("report_dashboardcard"), "dashboard_id", dashboard_id, dashcards, k.DASHCARD,
                    rw, acting_user, lambda row: row.get("entity_id"))
    series = _table("dashboardcard_series")
    for index, dashcard in enumerate(dashcards):
        session.execute(series.delete().where(series.c.dashboardcard_id == ids[index]))
        for entry in dashcard.get("series") or []:
            session.execute(series.insert().values(dashboardcard_id=ids[index], position=entry.get("position", 0),
                                                   card_id=rw.refs.to_local("card", entry["card_id"])))


def _events(session, timeline_id: int, item: Incoming, rw: Rewriter, acting_user: int) -> None:
    def key(row):
        stamp = row.get("timestamp")
        stamp = stamp if isinstance(stamp, str) else stamp.astimezone(dt.timezone.utc).isoformat()
        return (row.get("name"), stamp)

    _children(session, _table("timeline_event"), "timeline_id", timeline_id, item.data.get("events") or [], k.EVENT,
              rw, acting_user, key, extra=lambda e: {"creator_id": k.to_values(k.EVENT, e, rw, acting_user).get(
                  "creator_id", acting_user)})


def _dimension(session, field_id: int, item: Incoming, rw: Rewriter) -> None:
    table = _table("dimension")
    wanted = (item.data.get("dimensions") or [])[:1]
    existing = session.execute(sa.select(table.c.id).where(table.c.field_id == field_id)).scalar()
    if not wanted:
        if existing is not None:
            session.execute(table.delete().where(table.c.id == existing))
        return
    values = k.to_values(k.DIMENSION, wanted[0], rw, 0)
    if existing is None:
        from core.appdb.models.base import new_entity_id

        session.execute(table.insert().values(field_id=field_id, entity_id=new_entity_id(), **values))
    else:
        session.execute(table.update().where(table.c.id == existing).values(**values))


def _field_values(session, field_id: int, item: Incoming, rw: Rewriter) -> None:
    table = _table("metabase_fieldvalues")
    values = k.to_values(k.FIELD_VALUES, item.data, rw, 0)
    existing = session.execute(sa.select(table.c.id).where(table.c.field_id == field_id, table.c.type == "full")).scalar()
    if existing is None:
        session.execute(table.insert().values(field_id=field_id, type="full", **values))
    else:
        session.execute(table.update().where(table.c.id == existing).values(**values))


def _settings(session, item: Incoming, registry) -> None:
    wanted = ex.exportable_settings(registry)
    for key, value in sorted(item.data.items()):
        if key not in wanted:
            raise ImportProblem(f"{item.path}: setting {key!r} cannot be imported")
        if registry.env_value(wanted[key]) is None:
            registry.set(session, key, value)
