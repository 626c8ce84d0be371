"""The `related` links of an x-ray: zoom-in (the fields it breaks down by, the table's segments),
zoom-out (the table of a field, segment, query or cell), related (tables one foreign key away, either
way) and compare (a segment, query or cell with its whole table). App-DB metadata only."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Field, Segment, Table, User
from core.policy import data_access
from core.sync.humanize import humanize

from .roots import Root

MAX_ITEMS = 6


def _item(url: str, title: str, description: str | None = None) -> dict:
    return {"url": url, "title": title, "description": description}


def _table_name(table: Table) -> str:
    return table.display_name or humanize(table.name)


def links(session: Session, user: User, root: Root, bound: dict) -> dict:
    zoom_in, zoom_out, related, compare = [], [], [], []
    table = session.get(Table, root.table_id) if root.table_id is not None else None
    table_url = f"/auto/dashboard/table/{root.table_id}"
    cell = root.extra.get("cell")
    if cell is not None:
        whole = root.extra.get("whole", root.name)
        zoom_out.append(_item(root.url, whole, f"The whole of {whole}"))
        if table is not None:
            compare.append(_item(f"{root.url}/cell/{cell}/compare/table/{root.table_id}",
                                 f"Compare with all {_table_name(table)}", "How this cell differs from the whole table"))
    elif root.entity == "field" and table is not None:
        zoom_out.append(_item(table_url, _table_name(table), table.description))
    elif root.entity in ("segment", "adhoc") and table is not None and root.filters:
        zoom_out.append(_item(table_url, _table_name(table), table.description))
        compare.append(_item(f"{root.url}/compare/table/{root.table_id}", f"Compare with all {_table_name(table)}",
                             f"How {root.name} differs from the whole table"))
    elif root.entity in ("question", "model") and root.extra.get("source_table_id") is not None:
        source = session.get(Table, root.extra["source_table_id"])
        if source is not None and data_access.can_read(session, user, source.db_id, source.id):
            zoom_out.append(_item(f"/auto/dashboard/table/{source.id}", _table_name(source), source.description))
    if root.entity != "field" and cell is None:
        seen = set()
        for cols, _ in bound.values():
            for col in cols:
                if col.id is not None and col.via is None and col.id not in seen and len(zoom_in) < MAX_ITEMS:
                    seen.add(col.id)
                    zoom_in.append(_item(f"/auto/dashboard/field/{col.id}", col.display_name,
                                         f"A closer look at {col.display_name}"))
        if table is not None and root.entity == "table":
            for segment in session.scalars(select(Segment).where(Segment.table_id == table.id,
                                                                 Segment.archived.is_(False)).order_by(Segment.id)):
                zoom_in.append(_item(f"/auto/dashboard/segment/{segment.id}", segment.name, segment.description))
    if table is not None:
        linked = {c.table_id for c in root.cols if c.via is not None}
        pks = [c.id for c in root.cols if c.via is None and c.semantic_type == "type/PK" and c.id is not None]
        if pks:
            linked |= set(session.scalars(select(Field.table_id).where(Field.fk_target_field_id.in_(pks),
                                                                       Field.active.is_(True))))
        linked.discard(table.id)
        tables = [t for t in session.scalars(select(Table).where(Table.id.in_(linked), Table.active.is_(True))
                                             .order_by(Table.id))
                  if data_access.can_read(session, user, t.db_id, t.id)]
        related = [_item(f"/auto/dashboard/table/{t.id}", _table_name(t), t.description) for t in tables[:MAX_ITEMS]]
    return {"zoom-in": zoom_in, "zoom-out": zoom_out, "related": related, "compare": compare}
