"""Users plugin logic: how a user is shown to whom."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.models import User
from core.users import personal_collection_id


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


def current_user_json(session: Session, user: User) -> dict:
    first_user_id = session.scalar(select(func.min(User.id)).where(User.type == "personal"))
    other_users = session.scalar(select(func.count()).select_from(User).where(User.type == "personal", User.id != user.id))
    return {
        **user_json(user),
        "personal_collection_id": personal_collection_id(session, user.id),
        "group_ids": user.group_ids,
        "user_group_memberships": [
            {"id": m.group_id, "is_group_manager": m.is_group_manager} for m in user.memberships
        ],
        "is_installer": user.id == first_user_id,
        "has_invited_second_user": user.id == first_user_id and other_users > 0,
        "first_login": user.date_joined,
        "custom_homepage": None,
        "is_datasetnewb": user.is_datasetnewb,
    }
