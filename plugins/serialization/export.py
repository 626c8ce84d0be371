"""Export: the server's content as documents, one per entity, at the paths Metabase's serialization
uses (collections/<entity_id>_<slug>/cards|dashboards|timelines/, actions/, snippets/,
databases/<db>/schemas/<schema>/tables/<table>/fields|segments|metrics/, settings.yaml), in a stable
order with portable references; and writing them to a directory."""
from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from core.appdb.models import Base

from . import kinds as k
from . import yamltext
from .entity_ids import backfill
from .refs import Refs, Rewriter


@dataclass(frozen=True)
class Options:
    collections: tuple[int, ...] = ()   # empty: every collection (and the root's items)
    include_collections: bool = True
    include_settings: bool = True
    include_data_model: bool = True
    include_field_values: bool = False
    include_database_secrets: bool = False


@dataclass
class Doc:
    path: str       # relative, with "/" separators
    key: tuple      # (model, identity): what an import matches it by
    data: dict


def slug(name: str | None) -> str:
    text = re.sub(r"[^a-z0-9]+", "_", (name or "").lower()).strip("_")
    return text[:60].rstrip("_") or "untitled"


def safe(name: str | None) -> str:
    """A database, schema, table or field name as one path segment."""
    return urllib.parse.quote(str(name), safe=" _-.,()'&+=@$!~")


def _meta(model: str, eid: str, label: str) -> list[dict]:
    return [{"id": eid, "label": label, "model": model}]


def _rows(session, table_name: str, *order):
    table = Base.metadata.tables.get(table_name)
    if table is None:
        return []
    return session.execute(sa.select(table).order_by(*[table.c[o] for o in order] or [table.c.id])).all()


def _eid_doc(kind: k.Kind, row, rw: Rewriter, folder: str) -> Doc:
    label = slug(row.name)
    data = {"serdes/meta": _meta(kind.model, row.entity_id, label), "entity_id": row.entity_id,
            **k.to_document(kind, row, rw)}
    return Doc(f"{folder}/{row.entity_id}_{label}.yaml", (kind.model, row.entity_id), data)


def documents(session, options: Options, settings_registry=None) -> list[Doc]:
    """Every document of an export, sorted by path. Rows without an entity id get theirs first."""
    backfill(session.connection())
    refs = Refs(session)
    rw = Rewriter(refs, export=True)
    docs: list[Doc] = []
    if options.include_collections:
        docs += _content(session, options, rw)
    if options.include_data_model:
        docs += _data_model(session, options, rw)
    if options.include_settings and settings_registry is not None:
        docs += _settings(session, settings_registry)
    return sorted(docs, key=lambda d: d.path)


# -------------------------------------------------------------------------------------------- content

def _content(session, options: Options, rw: Rewriter) -> list[Doc]:
    collections = {r.id: r for r in _rows(session, "collection")}

    def ancestors(row) -> list[int]:
        return [int(p) for p in (row.location or "/").strip("/").split("/") if p]

    def personal(row) -> bool:
        return row.personal_owner_id is not None or any(
            collections[a].personal_owner_id is not None for a in ancestors(row) if a in collections)

    chosen = {cid for cid, row in collections.items() if not personal(row)}
    if options.collections:
        roots = set(options.collections)
        chosen = {cid for cid in chosen if cid in roots or roots & set(ancestors(collections[cid]))}
    folders = {}
    for cid in chosen:
        row = collections[cid]
        chain = [collections[a] for a in ancestors(row) if a in collections] + [row]
        folders[cid] = "collections/" + "/".join(f"{c.entity_id}_{slug(c.name)}" for c in chain)
    if not options.collections:
        folders[None] = "collections"

    docs = []
    for cid in chosen:
        row = collections[cid]
        doc = _eid_doc(k.COLLECTION, row, rw, folders[cid])
        parents = [a for a in ancestors(row) if a in collections]
        doc.data["parent_id"] = collections[parents[-1]].entity_id if parents else None
        docs.append(doc)

    exported_cards = set()
    for row in _rows(session, "report_card"):
        if row.collection_id in folders:
            docs.append(_eid_doc(k.CARD, row, rw, f"{folders[row.collection_id]}/cards"))
            exported_cards.add(row.id)
    if k.DASHBOARD.present:
        tabs = _grouped(session, "dashboard_tab", "dashboard_id", "position", "entity_id")
        dashcards = _grouped(session, "report_dashboardcard", "dashboard_id")
        docs += [_dashboard(session, row, rw, f"{folders[row.collection_id]}/dashboards", tabs.get(row.id, []),
                            dashcards.get(row.id, []))
                 for row in _rows(session, "report_dashboard") if row.collection_id in folders]
    events = _grouped(session, "timeline_event", "timeline_id", "timestamp", "name", "id")
    for row in _rows(session, "timeline"):
        if row.collection_id in folders:
            doc = _eid_doc(k.TIMELINE, row, rw, f"{folders[row.collection_id]}/timelines")
            doc.data["events"] = [k.to_document(k.EVENT, e, rw) for e in events.get(row.id, [])]
            docs.append(doc)
    if not options.collections:
        docs += [_eid_doc(k.SNIPPET, row, rw, "snippets") for row in _rows(session, "native_query_snippet")]
    if k.ACTION.present:
        for row in _rows(session, "action"):
            if row.model_id in exported_cards:
                doc = _eid_doc(k.ACTION, row, rw, "actions")
                part = k.ACTION_PARTS.get(row.type)
                if part is not None and part.present:
                    table = Base.metadata.tables[part.table]
                    sub = session.execute(sa.select(table).where(table.c.action_id == row.id)).first()
                    if sub is not None:
                        doc.data.update(k.to_document(part, sub, rw))
                docs.append(doc)
    return docs


def _grouped(session, table_name: str, parent: str, *order) -> dict[int, list]:
    """A child table's rows by parent id, each list in `order` (default id)."""
    groups: dict[int, list] = {}
    for row in _rows(session, table_name, *order):
        groups.setdefault(row._mapping[parent], []).append(row)
    return groups


def _dashboard(session, row, rw: Rewriter, folder: str, tabs: list, dashcards: list) -> Doc:
    doc = _eid_doc(k.DASHBOARD, row, rw, folder)
    tab_order = {t.id: i for i, t in enumerate(tabs)}
    doc.data["tabs"] = [{"entity_id": t.entity_id, **k.to_document(k.TAB, t, rw)} for t in tabs]
    dashcards = sorted(dashcards, key=lambda d: (tab_order.get(d.dashboard_tab_id, -1), d.row, d.col,
                                                 d.entity_id or ""))
    series = Base.metadata.tables["dashboardcard_series"]
    ids = [d.id for d in dashcards]
    by_dashcard: dict[int, list] = {}
    for entry in session.execute(sa.select(series).where(series.c.dashboardcard_id.in_(ids))
                                 .order_by(series.c.position, series.c.id)).all() if ids else ():
        by_dashcard.setdefault(entry.dashboardcard_id, []).append(entry)
    out = []
    for dashcard in dashcards:
        item = {"entity_id": dashcard.entity_id, **k.to_document(k.DASHCARD, dashcard, rw)}
        item["series"] = [{"card_id": rw.refs.to_portable("card", c.card_id), "position": c.position}
                          for c in by_dashcard.get(dashcard.id, [])]
        out.append(item)
    doc.data["dashcards"] = out
    return doc


# -------------------------------------------------------------------------------------------- data model

def table_folder(db: str, schema: str | None, table: str) -> str:
    base = f"databases/{safe(db)}"
    return f"{base}/schemas/{safe(schema)}/tables/{safe(table)}" if schema is not None else f"{base}/tables/{safe(table)}"


def _path_meta(path: tuple) -> list[dict]:
    db, schema, table, *fields = path
    meta = [{"id": db, "model": "Database"}]
    if schema is not None:
        meta.append({"id": schema, "model": "Schema"})
    if table is not None:
        meta.append({"id": table, "model": "Table"})
    meta += [{"id": f, "model": "Field"} for f in fields]
    return meta


def _data_model(session, options: Options, rw: Rewriter) -> list[Doc]:
    refs = rw.refs
    docs = []
    databases = [r for r in _rows(session, "metabase_database") if not r.is_audit]
    exported = {r.id for r in databases}
    for row in databases:
        data = {"serdes/meta": [{"id": row.name, "model": "Database"}], **k.to_document(k.DATABASE, row, rw)}
        if options.include_database_secrets and row.details:
            from core.driver.crypto import decrypt_details

            data["details"] = decrypt_details(row.details)
        docs.append(Doc(f"databases/{safe(row.name)}/{safe(row.name)}.yaml", ("Database", (row.name,)), data))
    tables = {}
    for row in _rows(session, "metabase_table"):
        if row.db_id not in exported:
            continue
        path = tuple(refs.to_portable("table", row.id))
        if path in tables:  # an inactive namesake of an active table: the active one is the table
            continue
        tables[path] = row
    for path, row in tables.items():
        folder = table_folder(*path)
        data = {"serdes/meta": _path_meta(path), **k.to_document(k.TABLE, row, rw), "db_id": path[0]}
        docs.append(Doc(f"{folder}/{safe(row.name)}.yaml", ("Table", path), data))
    table_ids = {row.id for row in tables.values()}
    dimensions = {r.field_id: r for r in _rows(session, "dimension")}
    values = {r.field_id: r for r in _rows(session, "metabase_fieldvalues") if r.type == "full"}
    seen = set()
    for row in _rows(session, "metabase_field"):
        if row.table_id not in table_ids:
            continue
        path = tuple(refs.to_portable("field", row.id))
        if path in seen:
            continue
        seen.add(path)
        folder = table_folder(*path[:3]) + "/fields"
        name = ".".join(safe(p) for p in path[3:])
        data = {"serdes/meta": _path_meta(path), **k.to_document(k.FIELD, row, rw), "table_id": list(path[:3])}
        dimension = dimensions.get(row.id)
        data["dimensions"] = [k.to_document(k.DIMENSION, dimension, rw)] if dimension is not None else []
        docs.append(Doc(f"{folder}/{name}.yaml", ("Field", path), data))
        if options.include_field_values and row.id in values:
            meta = _path_meta(path) + [{"id": "0", "model": "FieldValues"}]
            docs.append(Doc(f"{folder}/{name}___fieldvalues.yaml", ("FieldValues", path),
                            {"serdes/meta": meta, **k.to_document(k.FIELD_VALUES, values[row.id], rw)}))
    for kind in (k.SEGMENT, k.LEGACY_METRIC):
        for row in _rows(session, kind.table):
            if row.table_id in table_ids:
                path = tuple(refs.to_portable("table", row.table_id))
                docs.append(_eid_doc(kind, row, rw, f"{table_folder(*path)}/{kind.folder}"))
    return docs


# -------------------------------------------------------------------------------------------- settings

# Settings that describe this server, not its content: never carried to another.
INSTANCE_SETTINGS = frozenset({"site-uuid", "setup-token", "instance-creation", "analytics-uuid",
                               "site-url", "embedding-secret-key", "version-info", "startup-time-millis"})


def exportable_settings(registry) -> dict:
    return {key: d for key, d in registry.definitions.items()
            if d.getter is None and d.env and not d.sensitive and d.visibility != "internal"
            and key not in INSTANCE_SETTINGS}


def _settings(session, registry) -> list[Doc]:
    table = Base.metadata.tables["setting"]
    wanted = exportable_settings(registry)
    rows = session.execute(sa.select(table.c.key, table.c.value).where(table.c.key.in_(sorted(wanted)))).all()
    return [Doc("settings.yaml", ("Setting", "settings"), {key: json.loads(value) for key, value in sorted(rows)})]


# -------------------------------------------------------------------------------------------- files

def text_of(doc: Doc) -> str:
    return yamltext.dump(doc.data)


def write(docs: list[Doc], root: Path) -> int:
    """Write the documents under `root` (created); files already there and not written are left alone."""
    for doc in docs:
        target = root / doc.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text_of(doc), encoding="utf-8")
    return len(docs)
