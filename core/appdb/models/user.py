"""Users, their login sessions, permission groups and group memberships.

Superuser status is membership in the Administrators group; `User.is_superuser` mirrors it and
core.identity.users keeps both in step in one transaction.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, UTCDateTime, new_entity_id, utcnow

ALL_USERS_GROUP_ID = 1
ADMIN_GROUP_ID = 2


class User(Base):
    __tablename__ = "core_user"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    first_name: Mapped[str | None] = mapped_column(String(254))
    last_name: Mapped[str | None] = mapped_column(String(254))
    password_hash: Mapped[str | None] = mapped_column(String(255))
    is_superuser: Mapped[bool] = mapped_column(Boolean, default=False)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    is_qbnewb: Mapped[bool] = mapped_column(Boolean, default=True)
    is_datasetnewb: Mapped[bool] = mapped_column(Boolean, default=True)
    # personal, api-key or internal; only personal users appear in user listings.
    type: Mapped[str] = mapped_column(String(32), default="personal")
    locale: Mapped[str | None] = mapped_column(String(5))
    login_attributes: Mapped[dict | None] = mapped_column(default=None)
    settings: Mapped[dict | None] = mapped_column(default=None)
    sso_source: Mapped[str | None] = mapped_column(String(32))
    # SHA-256 of the outstanding password-reset (or invitation) token and when it was issued.
    reset_token: Mapped[str | None] = mapped_column(String(64))
    reset_triggered: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    date_joined: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_login: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    memberships: Mapped[list["PermissionsGroupMembership"]] = relationship(
        back_populates="user", cascade="all, delete-orphan"
    )

    @property
    def common_name(self) -> str:
        name = " ".join(part for part in (self.first_name, self.last_name) if part).strip()
        return name or self.email

    @property
    def group_ids(self) -> list[int]:
        return sorted(m.group_id for m in self.memberships)

    # core.policy.principal.Principal: a user is the account its permission rows are about.
    @property
    def principal_key(self) -> tuple:
        return ("user", self.id)

    @property
    def account(self) -> "User":
        return self


class LoginSession(Base):
    """A login session. `id` is the SHA-512 of the token handed to the client; the token itself is never stored."""

    __tablename__ = "core_session"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    anti_csrf_token: Mapped[str | None] = mapped_column(Text)

    user: Mapped[User] = relationship()


class PermissionsGroup(Base):
    __tablename__ = "permissions_group"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)

    memberships: Mapped[list["PermissionsGroupMembership"]] = relationship(
        back_populates="group", cascade="all, delete-orphan"
    )


class PermissionsGroupMembership(Base):
    __tablename__ = "permissions_group_membership"
    __table_args__ = (UniqueConstraint("user_id", "group_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("permissions_group.id", ondelete="CASCADE"), index=True)
    is_group_manager: Mapped[bool] = mapped_column(Boolean, default=False)

    user: Mapped[User] = relationship(back_populates="memberships")
    group: Mapped[PermissionsGroup] = relationship(back_populates="memberships")
