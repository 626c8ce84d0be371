"""Who may see and change the data model, asked by the databases, tables and fields plugins.

The one place those plugins ask; it follows core.permissions when that module is present
(data access "unrestricted" or "blocked", data-model editing), and otherwise Metabase's default
for an instance without advanced permissions: every user reads every database, superusers edit.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from .errors import Forbidden
from .models import User


def _policy():
    try:
        from . import permissions
    except ImportError:
        return None
    return permissions


def can_read(session: Session, user: User, database_id: int) -> bool:
    """Whether the user sees a database's tables and fields (not blocked)."""
    if user.is_superuser:
        return True
    policy = _policy()
    if policy is not None and hasattr(policy, "data_access"):
        return policy.data_access(session, user, database_id) != "blocked"
    return True


def can_edit_data_model(session: Session, user: User, database_id: int) -> bool:
    if user.is_superuser:
        return True
    policy = _policy()
    if policy is not None and hasattr(policy, "can_edit_data_model"):
        return bool(policy.can_edit_data_model(session, user, database_id))
    return False


def can_manage(session: Session, user: User, database_id: int) -> bool:
    """Whether the user may change a database itself (details, sync, values): superusers."""
    return bool(user.is_superuser)


def check_read(session: Session, user: User, database_id: int) -> None:
    if not can_read(session, user, database_id):
        raise Forbidden()


def check_edit_data_model(session: Session, user: User, database_id: int) -> None:
    if not can_edit_data_model(session, user, database_id):
        raise Forbidden()


def check_manage(session: Session, user: User, database_id: int) -> None:
    if not can_manage(session, user, database_id):
        raise Forbidden()
