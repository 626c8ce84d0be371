"""Who may see and change the data model, asked by the databases, tables and fields plugins.

A thin layer over core.policy.permissions (the one policy module), in the terms those plugins need:
reading a database or table (data access not blocked), editing its data model (display names,
types, visibility, values) and managing the database itself (details, sync).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Forbidden
from core.policy import permissions


def can_read(session: Session, user: User, database_id: int, table_id: int | None = None) -> bool:
    """Whether the user sees a database's (or one table's) metadata: data access not blocked."""
    return permissions.can_see_data(session, user, database_id, table_id)


def readable_tables(session: Session, user: User, database_id: int, tables: list) -> list:
    """The tables of one database whose data the user may see, asking once when the answer is the
    same for all of them (no table blocked and no plugin deciding table by table)."""
    if permissions.is_admin(user) or not tables:
        return tables
    if not permissions.permission_hooks_active() and permissions.data_permission(
            session, user, database_id, "view-data", whole_db=True) != "blocked":
        return tables
    return [t for t in tables if can_read(session, user, database_id, t.id)]


def can_edit_data_model(session: Session, user: User, database_id: int, table_id: int | None = None) -> bool:
    return permissions.can_edit_data_model(session, user, database_id, table_id)


def can_manage(session: Session, user: User, database_id: int) -> bool:
    """Whether the user may see details of and change a database itself (details, sync, values)."""
    return permissions.can_manage_database(session, user, database_id)


def native_permissions(session: Session, user: User, database_id: int) -> str:
    return "write" if permissions.can_query(session, user, database_id, native=True) else "none"


def restrict_blocked(database_json: dict) -> dict:
    return permissions.restrict_blocked(database_json)


def check_read(session: Session, user: User, database_id: int, table_id: int | None = None) -> None:
    if not can_read(session, user, database_id, table_id):
        raise Forbidden()


def check_edit_data_model(session: Session, user: User, database_id: int, table_id: int | None = None) -> None:
    if not can_edit_data_model(session, user, database_id, table_id):
        raise Forbidden()


def check_manage(session: Session, user: User, database_id: int) -> None:
    if not can_manage(session, user, database_id):
        raise Forbidden()
