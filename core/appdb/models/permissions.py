"""Permission rows: data permissions (group x database [x table]), collection permissions (group x
collection), the revision counters of the permission graphs and their change log.

Data permissions follow Metabase's v2 `data_permissions` table: one row per group, permission type
and database, either for the whole database (table_id NULL) or for one table. A missing row means
the least permissive value. Collection permissions hold "read" or "write" (no row: none); the root
collection of a namespace is the row with collection_id NULL and that namespace ("" for default).

New databases and collections get their default rows from the mapper events at the end of this
module, so that whichever plugin creates them, permissions exist in the same transaction.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String, Text, event, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, utcnow
from .collection import Collection
from .database import Database
from .user import ADMIN_GROUP_ID, ALL_USERS_GROUP_ID

# perm_type -> values, most permissive first. "sandboxed" and "impersonated" exist in the value space
# so that a row written by an extension is understood, but the API refuses to write them (402).
DATA_PERM_VALUES: dict[str, tuple[str, ...]] = {
    "view-data": ("unrestricted", "sandboxed", "impersonated", "legacy-no-self-service", "blocked"),
    "create-queries": ("query-builder-and-native", "query-builder", "no"),
    "download": ("full", "limited", "none"),
    "data-model": ("all", "none"),
    "details": ("yes", "no"),
    "execute": ("all", "none"),
}

# What All Users get on a new database, as on a fresh Metabase instance.
NEW_DATABASE_DEFAULTS: dict[str, str] = {
    "view-data": "unrestricted",
    "create-queries": "query-builder-and-native",
    "download": "full",
    "data-model": "none",
    "details": "no",
    "execute": "none",
}

DATA_GRAPH = "data"
EXECUTION_GRAPH = "execution"
COLLECTION_GRAPH = "collection"


class DataPermission(Base):
    __tablename__ = "data_permission"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("permissions_group.id", ondelete="CASCADE"), index=True)
    db_id: Mapped[int] = mapped_column(ForeignKey("metabase_database.id", ondelete="CASCADE"), index=True)
    perm_type: Mapped[str] = mapped_column(String(64))
    # Set for table rows (the table's schema, for grouping in graphs); NULL for whole-database rows.
    schema_name: Mapped[str | None] = mapped_column(String(254))
    table_id: Mapped[int | None] = mapped_column(ForeignKey("metabase_table.id", ondelete="CASCADE"), index=True)
    perm_value: Mapped[str] = mapped_column(String(64))


class CollectionPermission(Base):
    __tablename__ = "collection_permission"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("permissions_group.id", ondelete="CASCADE"), index=True)
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collection.id", ondelete="CASCADE"), index=True)
    # Only meaningful for the root (collection_id NULL): "" is the default namespace.
    namespace: Mapped[str] = mapped_column(String(254), default="")
    level: Mapped[str] = mapped_column(String(16))  # read | write


class PermissionsGraphRevision(Base):
    """The current revision of one graph ("data", "execution", "collection"). A PUT bumps it with
    UPDATE ... WHERE revision = <the revision the client read>, so the check and the increment are
    one atomic statement."""

    __tablename__ = "permissions_graph_revision"

    graph: Mapped[str] = mapped_column(String(32), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, default=0)


class PermissionsRevision(Base):
    """The change log: what each graph PUT sent, by whom."""

    __tablename__ = "permissions_revision"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    graph: Mapped[str] = mapped_column(String(32))
    revision: Mapped[int] = mapped_column(Integer)
    before: Mapped[dict | None] = mapped_column(default=None)
    after: Mapped[dict | None] = mapped_column(default=None)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    remark: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


# --------------------------------------------------------------------------------------------------
# Defaults for new objects, written in the transaction that creates them
# --------------------------------------------------------------------------------------------------


@event.listens_for(Database, "after_insert")
def _new_database_permissions(mapper, connection, target: Database) -> None:
    """All Users get NEW_DATABASE_DEFAULTS; every other group may view the data and nothing more, as
    Metabase sets up a new database."""
    from .user import PermissionsGroup

    other_groups = [g for g in connection.scalars(select(PermissionsGroup.id))
                    if g not in (ALL_USERS_GROUP_ID, ADMIN_GROUP_ID)]
    rows = [{"group_id": ALL_USERS_GROUP_ID, "perm_type": perm_type, "perm_value": value}
            for perm_type, value in NEW_DATABASE_DEFAULTS.items()]
    rows += [{"group_id": g, "perm_type": "view-data", "perm_value": "unrestricted"} for g in other_groups]
    connection.execute(insert(DataPermission), [
        {**row, "db_id": target.id, "schema_name": None, "table_id": None} for row in rows])


@event.listens_for(Collection, "after_insert")
def _new_collection_permissions(mapper, connection, target: Collection) -> None:
    """A new collection starts with its parent's permissions (the root's at top level), as in Metabase.
    Personal collections and collections inside them are governed by ownership and get no rows."""
    if target.personal_owner_id is not None:
        return
    parent_ids = [int(part) for part in (target.location or "/").strip("/").split("/") if part]
    table = CollectionPermission.__table__
    if parent_ids:
        personal = connection.scalar(select(Collection.personal_owner_id).where(
            Collection.id == parent_ids[0]))
        if personal is not None:
            return
        source = select(table.c.group_id, table.c.level).where(table.c.collection_id == parent_ids[-1])
    else:
        source = select(table.c.group_id, table.c.level).where(
            table.c.collection_id.is_(None), table.c.namespace == (target.namespace or ""))
    rows = [{"group_id": group_id, "collection_id": target.id, "namespace": target.namespace or "", "level": level}
            for group_id, level in connection.execute(source) if group_id != ADMIN_GROUP_ID]
    if rows:
        connection.execute(insert(CollectionPermission), rows)
