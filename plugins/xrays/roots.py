"""What an x-ray looks at (its "root"): the entity of the URL resolved into a query source, the base
filters that narrow it (a segment, an ad-hoc query's filter, a drilled cell) and the columns templates
bind, its own and those of the tables its foreign keys reach. Access is checked here, as each entity's
own endpoint checks it: 404 for what does not exist, 403 for what the caller may not read.
Only app-DB metadata is read; nothing runs on the warehouse.
"""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field, replace

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Field, Segment, Table, User
from core.content import segments as segment_content
from core.http.errors import Forbidden, Invalid, NotFound, check_404
from core.policy import data_access, permissions
from core.query import access
from core.query.mbql import normalize
from core.sync.humanize import humanize

from . import types

ENTITIES = ("table", "segment", "model", "question", "adhoc", "field")
COMPARISONS = ("table", "segment", "adhoc")
BAD_BASE64 = "value couldn't be parsed as base64 encoded JSON"
HIDDEN = ("sensitive", "retired", "hidden")


@dataclass(frozen=True)
class Col:
    """A column a template may bind: a field of the root's table, of a table one FK away (`via` is the
    FK field's id), or of a saved question's results (`id` None, referenced by name)."""

    id: int | None
    name: str
    display_name: str
    effective_type: str
    semantic_type: str | None
    fingerprint: dict | None
    table_id: int | None
    via: int | None = None
    links_to: str | None = None
    table_entity: str = "GenericTable"
    table_name: str = ""

    def ref(self, **options) -> list:
        if self.id is None:
            return ["field", self.name, {"base-type": self.effective_type, **options}]
        if self.via is not None:
            options["source-field"] = self.via
        return ["field", self.id, options or None]

    @property
    def distinct_count(self) -> int | None:
        return ((self.fingerprint or {}).get("global") or {}).get("distinct-count")


@dataclass(frozen=True)
class Root:
    entity: str
    id_or_query: str
    database_id: int
    source: dict
    name: str
    entity_type: str
    cols: tuple[Col, ...]
    filters: tuple = ()
    description: str | None = None
    table_id: int | None = None
    focus: Col | None = None
    segment_id: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"/auto/dashboard/{self.entity}/{self.id_or_query}"

    def narrowed(self, clause: list, cell: str) -> "Root":
        return replace(self, filters=self.filters + (clause,),
                       extra={**self.extra, "cell": cell, "whole": self.extra.get("whole", self.name)})


def decode_json(text: str):
    """base64 (URL-safe or standard, padding optional) JSON -> value; ValueError when it is not."""
    try:
        raw = text.encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
        return orjson.loads(base64.b64decode(raw + b"=" * (-len(raw) % 4), validate=True))
    except (UnicodeEncodeError, binascii.Error, orjson.JSONDecodeError, ValueError):
        raise ValueError(BAD_BASE64) from None


def encode_json(value) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(value)).decode().rstrip("=")


def _col(f: Field, table: Table, via: int | None = None, links: dict | None = None) -> Col:
    return Col(f.id, f.name, f.display_name or humanize(f.name), f.effective_type or f.base_type,
               f.semantic_type, f.fingerprint, f.table_id, via, (links or {}).get(f.fk_target_field_id),
               types.short_entity(table.entity_type), table.display_name or humanize(table.name))


def table_cols(session: Session, user: User, table: Table) -> tuple[Col, ...]:
    """The table's visible fields and those of the tables its FKs point at that the user may query."""
    own = [f for f in session.scalars(select(Field).where(Field.table_id == table.id, Field.active.is_(True))
                                      .order_by(Field.position, Field.id)) if f.visibility_type not in HIDDEN]
    target_ids = {f.fk_target_field_id for f in own if f.semantic_type == "type/FK" and f.fk_target_field_id}
    targets = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(target_ids)))} if target_ids else {}
    tables = {t.id: t for t in session.scalars(select(Table).where(
        Table.id.in_({f.table_id for f in targets.values()}), Table.active.is_(True)))} if targets else {}
    tables = {i: t for i, t in tables.items() if i != table.id
              and permissions.can_query(session, user, t.db_id, table_id=t.id)}
    linked = {fid: types.short_entity(tables[f.table_id].entity_type) for fid, f in targets.items() if f.table_id in tables}
    cols = [_col(f, table, links=linked) for f in own]
    if tables:
        by_table: dict[int, list[Field]] = {}
        for f in session.scalars(select(Field).where(Field.table_id.in_(tables), Field.active.is_(True))
                                 .order_by(Field.position, Field.id)):
            if f.visibility_type not in HIDDEN:
                by_table.setdefault(f.table_id, []).append(f)
        for fk in own:
            target = targets.get(fk.fk_target_field_id)
            if fk.semantic_type == "type/FK" and target is not None and target.table_id in tables:
                cols.extend(_col(f, tables[target.table_id], via=fk.id) for f in by_table.get(target.table_id, ())
                            if f.semantic_type not in ("type/PK", "type/FK"))
    return tuple(cols)


def table_root(session: Session, user: User, table: Table, entity: str, id_or_query: str, **extra) -> Root:
    cols = table_cols(session, user, table)
    return Root(entity, id_or_query, table.db_id, {"source-table": table.id}, table.display_name or humanize(table.name),
                types.infer_entity(table.entity_type, cols), cols, description=table.description,
                table_id=table.id, **extra)


def readable_table(session: Session, user: User, table_id: int) -> Table:
    table = session.get(Table, table_id) if 0 < table_id < 2**31 else None
    if table is None or not table.active:
        raise NotFound()
    data_access.check_read(session, user, table.db_id, table.id)
    return table


def _int_id(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise Invalid({"entity-id-or-query": "value must be an integer greater than zero."},
                      {"entity-id-or-query": ["value must be an integer greater than zero."]})
    value = int(text)
    if value >= 2**31:
        raise NotFound()
    return value


def _key_by_name(meta: dict) -> str | None:
    """A result column's semantic type; a native question's columns have none, and their keys ("id",
    "user_id") must not be summed or binned as numbers."""
    if meta.get("semantic_type") or meta.get("id") is not None:
        return meta.get("semantic_type")
    name = str(meta["name"]).lower()
    return "type/PK" if name == "id" else "type/FK" if name.endswith("_id") else None


def _card_root(session: Session, user: User, card_id: int, entity: str, id_or_query: str) -> Root:
    card = check_404(session.get(Card, card_id))
    if not permissions.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    if card.database_id is None or not permissions.can_see_data(session, user, card.database_id):
        raise Forbidden()
    cols = tuple(Col(None, m["name"], m.get("display_name") or humanize(m["name"]),
                     m.get("effective_type") or m.get("base_type") or "type/*", _key_by_name(m),
                     m.get("fingerprint"), None, table_name=card.name)
                 for m in card.result_metadata or () if isinstance(m, dict) and m.get("name"))
    entity_type = types.infer_entity(None, cols)
    return Root(entity, id_or_query, card.database_id, {"source-table": f"card__{card.id}"}, card.name,
                entity_type, cols, description=card.description,
                extra={"card_id": card.id, "source_table_id": card.table_id})


def _adhoc_root(session: Session, user: User, text: str) -> Root:
    try:
        dataset_query = decode_json(text)
        query = normalize(dataset_query)
        inner = dataset_query["query"]
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, Invalid):
        raise Invalid({"entity-id-or-query": BAD_BASE64}, {"entity-id-or-query": [BAD_BASE64]}) from None
    access.resolve_database(session, query)
    access.check_query(session, user, query, saved=False)
    source = inner.get("source-table")
    if isinstance(source, int):
        root = table_root(session, user, readable_table(session, user, source), "adhoc", text)
    elif isinstance(source, str) and source.startswith("card__") and source[6:].isdigit():
        root = replace(_card_root(session, user, int(source[6:]), "adhoc", text))
    else:
        raise Invalid({"entity-id-or-query": "The query needs a source table or a saved question."})
    clause = inner.get("filter")
    return replace(root, filters=(clause,) if clause else (), name=f"{root.name}, filtered" if clause else root.name)


def resolve(session: Session, user: User, entity: str, id_or_query: str) -> Root:
    """The root for /auto/dashboard/<entity>/<id_or_query> (entity already validated)."""
    if entity == "adhoc":
        return _adhoc_root(session, user, id_or_query)
    if entity == "table" and id_or_query.startswith("card__"):
        return _card_root(session, user, _int_id(id_or_query[6:]), "table", id_or_query)
    entity_id = _int_id(id_or_query)
    if entity == "table":
        return table_root(session, user, readable_table(session, user, entity_id), "table", id_or_query)
    if entity in ("model", "question"):
        card = session.get(Card, entity_id)
        # A model is also a saved question (Metabase x-rays either as one); "model" asks for a model.
        if card is None or (entity == "model" and card.type != "model"):
            raise NotFound()
        return _card_root(session, user, entity_id, entity, id_or_query)
    if entity == "segment":
        segment = segment_content.fetch(session, user, Segment, entity_id)
        table = readable_table(session, user, segment.table_id)
        root = table_root(session, user, table, "segment", id_or_query, segment_id=segment.id)
        return replace(root, name=segment.name, description=segment.description,
                       filters=(["segment", segment.id],))
    field_row = check_404(session.get(Field, entity_id))
    table = readable_table(session, user, field_row.table_id)
    access.field(session, user, field_row)
    root = table_root(session, user, table, "field", id_or_query)
    focus = next((c for c in root.cols if c.id == field_row.id and c.via is None), None) or _col(field_row, table)
    return replace(root, focus=focus, name=focus.display_name, extra={"table_name": root.name})
