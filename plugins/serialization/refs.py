"""Ids to portable references and back, for one server: databases by name, tables as [db, schema,
table], fields as [db, schema, table, field] (a nested field's parents before it), users by email,
and every other entity by its entity_id. `portable` and `local` rewrite a JSON tree (MBQL, parameters,
parameter mappings, visualization settings, click behaviours, result metadata; legacy MBQL and MBQL 5)
in either direction.
"""
from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from core.appdb.models import Base

# Entities referenced by entity_id: the reference kind and its table.
EID_TABLES = {"collection": "collection", "card": "report_card", "dashboard": "report_dashboard",
              "dashboard_tab": "dashboard_tab", "action": "action", "segment": "segment", "metric": "metric",
              "snippet": "native_query_snippet", "timeline": "timeline"}

# JSON keys whose value is a reference, and to what.
KEY_KINDS = {"database": "database", "source-field": "field", "card_id": "card", "card-id": "card", "source-card": "card",
             "table_id": "table", "field_id": "field", "fk_target_field_id": "field", "dashboard_id": "dashboard",
             "collection_id": "collection", "action_id": "action", "snippet-id": "snippet"}
# MBQL clauses whose second element is a reference.
CLAUSE_KINDS = {"field": "field", "field-id": "field", "segment": "segment", "metric": "card"}
# Click behaviours name their target by linkType.
LINK_KINDS = {"question": "card", "dashboard": "dashboard"}
STRING_REF_HEADS = ('["ref"', '["dimension"', '["field"')


class Unresolved(LookupError):
    """A portable reference this server has nothing for."""

    def __init__(self, kind: str, ref: Any):
        super().__init__(f"{kind} {json.dumps(ref)} not found on this server")
        self.kind, self.ref = kind, ref


def _table(name: str) -> sa.Table | None:
    return Base.metadata.tables.get(name)


class Refs:
    """Both directions of every reference kind, read from the app DB once per kind; `learn` adds the
    rows an import creates."""

    def __init__(self, session):
        self.session = session
        self.out: dict[str, dict] = {}
        self.back: dict[str, dict] = {}

    # ------------------------------------------------------------------ loading
    def _load(self, kind: str) -> None:
        if kind in self.out:
            return
        out: dict = {}
        if kind == "database":
            t = _table("metabase_database")
            out = dict(self.session.execute(sa.select(t.c.id, t.c.name)).all())
        elif kind == "user":
            t = _table("core_user")
            out = dict(self.session.execute(sa.select(t.c.id, t.c.email)).all())
        elif kind == "table":
            self._load("database")
            t = _table("metabase_table")
            rows = self.session.execute(sa.select(t.c.id, t.c.db_id, t.c.schema, t.c.name, t.c.active)
                                        .order_by(t.c.active, t.c.id)).all()
            out = {r.id: (self.out["database"].get(r.db_id), r.schema, r.name) for r in rows}
        elif kind == "field":
            self._load("table")
            t = _table("metabase_field")
            rows = self.session.execute(sa.select(t.c.id, t.c.table_id, t.c.parent_id, t.c.name, t.c.active)
                                        .order_by(t.c.active, t.c.id)).all()
            by_id = {r.id: r for r in rows}

            def path(r):
                names = [r.name]
                while r.parent_id is not None and r.parent_id in by_id:
                    r = by_id[r.parent_id]
                    names.insert(0, r.name)
                return (*self.out["table"].get(r.table_id, (None, None, None)), *names)

            out = {r.id: path(r) for r in rows}
        elif kind in EID_TABLES:
            t = _table(EID_TABLES[kind])
            if t is not None:
                out = dict(self.session.execute(sa.select(t.c.id, t.c.entity_id)).all())
        self.out[kind] = out
        # Active rows come last in the reads above, so an inactive namesake never wins the way back.
        self.back[kind] = {v: k for k, v in out.items() if v is not None}

    def learn(self, kind: str, row_id: int, portable) -> None:
        self._load(kind)
        portable = tuple(portable) if isinstance(portable, list) else portable
        self.out[kind][row_id] = portable
        self.back[kind][portable] = row_id

    # ------------------------------------------------------------------ one reference
    def to_portable(self, kind: str, row_id):
        if row_id is None or isinstance(row_id, bool) or not isinstance(row_id, int):
            return row_id
        self._load(kind)
        found = self.out[kind].get(row_id)
        if found is None:
            return row_id  # a dangling id stays as it is: nothing portable names it
        return list(found) if isinstance(found, tuple) else found

    def to_local(self, kind: str, ref, strict: bool = True):
        """The id of `ref` here; a number is taken as an id already. Unknown: Unresolved when strict,
        else None (the first pass of an import, before the entities it creates exist)."""
        if ref is None or isinstance(ref, (bool, int)):
            return ref
        self._load(kind)
        key = tuple(ref) if isinstance(ref, list) else ref
        found = self.back[kind].get(key)
        if found is None and strict:
            raise Unresolved(kind, ref)
        return found


class Rewriter:
    """One direction of the JSON walk: `to_portable` (export) or `to_local` (import)."""

    def __init__(self, refs: Refs, export: bool, strict: bool = True):
        self.refs, self.export, self.strict = refs, export, strict

    def one(self, kind: str, value):
        if self.export:
            return self.refs.to_portable(kind, value)
        if isinstance(value, int):
            return value
        return self.refs.to_local(kind, value, self.strict) if self.strict else (
            self.refs.to_local(kind, value, False) or value)

    def walk(self, value, metadata: bool = False):
        """`metadata`: a result_metadata column list, whose `id` is a field id."""
        if isinstance(value, dict):
            return self._dict(value, metadata)
        if isinstance(value, list):
            return self._list(value, metadata)
        if isinstance(value, str) and value.startswith(STRING_REF_HEADS):
            return self._string_ref(value)
        return value

    def _dict(self, value: dict, metadata: bool) -> dict:
        out = {}
        link_kind = LINK_KINDS.get(value.get("linkType")) if value.get("type") == "link" else None
        for key, item in value.items():
            new_key = self._string_ref(key) if isinstance(key, str) and key.startswith(STRING_REF_HEADS) else key
            kind = KEY_KINDS.get(key)
            if kind and not isinstance(item, dict) and (not isinstance(item, list) or kind in ("field", "table")):
                out[new_key] = self.one(kind, item)
            elif key == "source-table":
                out[new_key] = self._source_table(item)
            elif key == "targetId" and link_kind:
                out[new_key] = self.one(link_kind, item)
            elif key == "id" and metadata:
                out[new_key] = self.one("field", item)
            else:
                out[new_key] = self.walk(item, metadata and key != "field_ref")
        return out

    def _list(self, value: list, metadata: bool) -> list:
        if len(value) >= 2 and isinstance(value[0], str) and value[0] in CLAUSE_KINDS:
            kind = CLAUSE_KINDS[value[0]]
            # Legacy MBQL: [op, target, opts]; MBQL 5: [op, opts, target].
            at = 2 if len(value) >= 3 and isinstance(value[1], dict) else 1
            target = value[at]
            if (self.export and isinstance(target, int) and not isinstance(target, bool)) or (
                    not self.export and ((kind == "field" and isinstance(target, list))
                                         or (kind != "field" and isinstance(target, str)))):
                out = [self.walk(v) for v in value]
                out[at] = self.one(kind, target)
                return out
        return [self.walk(v, metadata) for v in value]

    def _source_table(self, item):
        if self.export:
            if isinstance(item, str) and item.startswith("card__") and item[6:].isdigit():
                return self.refs.to_portable("card", int(item[6:]))
            return self.refs.to_portable("table", item)
        if isinstance(item, list):
            return self.one("table", item)
        if isinstance(item, str) and not item.startswith("card__"):
            card = self.one("card", item)
            return f"card__{card}" if isinstance(card, int) else item
        return item

    def _string_ref(self, text: str) -> str:
        """Keys and ids that hold a reference as JSON text (column settings, click-behaviour targets):
        rewritten inside and written back compactly, as Metabase's frontend writes them."""
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        if not isinstance(parsed, list):
            return text
        return json.dumps(self._list(parsed, False), separators=(",", ":"), ensure_ascii=False)
