"""How a user is shown to whom: everyone sees names and e-mail; group managers a little more;
the user and administrators everything, with groups and personal collection."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import User
from core.identity.users import personal_collection_id


def public_json(user: User) -> dict:
    """What any user sees of another: name and e-mail."""
    return {"id": user.id, "email": user.email, "first_name": user.first_name, "last_name": user.last_name,
            "common_name": user.common_name}


def user_json(user: User) -> dict:
    """The columns every view of a user shows (Metabase's default user columns plus common_name)."""
    return {
        "id": user.id,
        "email": user.email,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "common_name": user.common_name,
        "date_joined": user.date_joined,
        "last_login": user.last_login,
        "is_superuser": user.is_superuser,
        "is_qbnewb": user.is_qbnewb,
        "is_active": user.is_active,
        "locale": user.locale,
        "login_attributes": user.login_attributes,
        "sso_source": user.sso_source,
        "updated_at": user.updated_at,
        "tenant_id": None,
    }


def memberships_json(user: User) -> list[dict]:
    return _memberships_json(_memberships(user))


def _memberships_json(memberships: tuple[tuple[int, bool], ...]) -> list[dict]:
    return [{"id": group_id, "is_group_manager": manager} for group_id, manager in memberships]


def detail_json(session: Session, user: User) -> dict:
    """A user as administrators and the user see them: with groups and personal collection."""
    return _detail(user, personal_collection_id(session, user.id), _memberships(user))


def _memberships(user: User) -> tuple[tuple[int, bool], ...]:
    """(group id, is group manager) of each of the user's groups, by group id."""
    return tuple(sorted((m.group_id, m.is_group_manager) for m in user.memberships))


def _detail(user: User, personal_id: int | None, memberships: tuple[tuple[int, bool], ...]) -> dict:
    return {
        **user_json(user),
        "personal_collection_id": personal_id,
        "group_ids": [group_id for group_id, _ in memberships],
        "user_group_memberships": _memberships_json(memberships),
        "is_datasetnewb": user.is_datasetnewb,
    }


def manager_json(user: User) -> dict:
    """A user as a group manager sees members of the groups they manage."""
    return {**public_json(user), "is_superuser": user.is_superuser, "last_login": user.last_login,
            "is_active": user.is_active, "date_joined": user.date_joined,
            "user_group_memberships": memberships_json(user), "group_ids": user.group_ids}


def current_user_json(session: Session, user: User) -> dict:
    def facts():
        first_user_id = session.scalar(select(func.min(User.id)).where(User.type == "personal"))
        other_users = session.scalar(select(func.count()).select_from(User)
                                     .where(User.type == "personal", User.id != user.id))
        return personal_collection_id(session, user.id), _memberships(user), first_user_id, other_users

    # Every page of the app and every client's start asks for it: what it reads besides the user's own
    # row is kept while the tables read are unchanged (core.appdb.memo).
    personal_id, memberships, first_user_id, other_users = memo.get_or_compute(session, ("current user", user.id), facts)
    return {
        **_detail(user, personal_id, memberships),
        "is_installer": user.id == first_user_id,
        "has_invited_second_user": user.id == first_user_id and other_users > 0,
        "first_login": user.date_joined,
        "custom_homepage": None,
    }
