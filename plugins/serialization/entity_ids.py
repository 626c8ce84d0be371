"""Entity ids, generated once: every app-DB row whose table has an `entity_id` column and holds none
gets a fresh NanoID (core.appdb.models.base.new_entity_id). The plugin's migration fills the rows that
existed before it; an export fills any made since by code that leaves the column empty, in the same
way, so an id, once given, never changes and two exports agree."""
from __future__ import annotations

import sqlalchemy as sa

from core.appdb.models.base import new_entity_id


def backfill(connection) -> int:
    """Give every row without an entity id one; the number given. Tables this app DB lacks (a disabled
    plugin's) are passed over; the tables are the models loaded (core's and the enabled plugins')."""
    from core.appdb.models import Base

    present = set(sa.inspect(connection).get_table_names())
    given = 0
    for name, table in sorted(Base.metadata.tables.items()):
        if name not in present or "entity_id" not in table.c or "id" not in table.c:
            continue
        ids = connection.execute(sa.select(table.c.id).where(table.c.entity_id.is_(None))).scalars().all()
        for row_id in ids:
            connection.execute(table.update().where(table.c.id == row_id).values(entity_id=new_entity_id()))
        given += len(ids)
    return given
