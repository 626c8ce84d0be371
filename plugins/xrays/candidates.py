"""GET /api/automagic-dashboards/database/:id/candidates: the tables of a database worth an x-ray,
grouped by schema, each scored by the cards its best template gives; at most ten tables per schema,
schemas and tables sorted by score. Metadata only."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Database, Table, User
from core.http.errors import Forbidden, check_404
from core.policy import data_access
from core.sync.humanize import humanize

from . import roots
from .bind import choose, interpolate
from .templates import DEFAULT_MAX_CARDS, registry

PER_SCHEMA = 10


def candidates(session: Session, user: User, database_id: int) -> list[dict]:
    database = check_404(session.get(Database, database_id) if database_id < 2**31 else None)
    tables = list(session.scalars(select(Table).where(Table.db_id == database.id, Table.active.is_(True),
                                                      Table.visibility_type.is_(None)).order_by(Table.id)))
    readable = data_access.readable_tables(session, user, database.id, tables)
    if tables and not readable:
        raise Forbidden()
    templates = registry()
    by_schema: dict[str | None, list[dict]] = {}
    for table in readable:
        root = roots.table_root(session, user, table, "table", str(table.id))
        try:
            template, built = choose(templates, root)
        except LookupError:
            continue
        if not built:
            continue
        score = round(sum(b.score for b in built[:DEFAULT_MAX_CARDS]) / 100, 2)
        by_schema.setdefault(table.schema, []).append({
            "url": root.url, "title": table.display_name or humanize(table.name), "score": score,
            "description": interpolate(template.description, root),
            "table": {"id": table.id, "db_id": table.db_id, "schema": table.schema, "name": table.name,
                      "display_name": table.display_name, "entity_type": table.entity_type,
                      "description": table.description},
            "dashboard-template-name": f"{template.kind}/{template.name}"})
    groups = []
    for schema, items in by_schema.items():
        items.sort(key=lambda i: (-i["score"], i["title"]))
        top = items[:PER_SCHEMA]
        groups.append({"id": f"{database.id}/{schema or ''}", "schema": schema, "score":
                       round(sum(i["score"] for i in top) / len(top), 2), "tables": top})
    groups.sort(key=lambda g: (-g["score"], g["schema"] or ""))
    return groups
