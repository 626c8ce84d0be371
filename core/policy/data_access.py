"""Who may see and change the data model, asked by the databases, tables and fields plugins.

A thin layer over core.policy.permissions (the one policy module), in the terms those plugins need:
reading a table (its metadata, fields, their stored and live values, x-rays: query permission on it,
permissions.can_read_table) or a database's metadata (permissions.can_read_database), editing its data
model (display names, types, visibility, values) and managing the database itself (details, sync).
What a dashboard or a saved question shows is authorised by that object instead (core.query.access).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.http.errors import Forbidden
from core.policy import permissions


def can_read(session: Session, user: User, database_id: int, table_id: int | None = None) -> bool:
    """Whether the user reads one table (permissions.can_read_table) or, without a table, sees the
    database's metadata (permissions.can_read_database)."""
    if table_id is None:
        return permissions.can_read_database(session, user, database_id)
    return permissions.can_read_table(session, user, database_id, table_id)


def readable_tables(session: Session, user: User, database_id: int, tables: list) -> list:
    """The tables of one database the user may read, in their order."""
    if permissions.is_admin(user) or not tables:
        return tables
    readable = permissions.readable_table_ids(session, user, database_id, [t.id for t in tables])
    return [t for t in tables if t.id in readable]


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
