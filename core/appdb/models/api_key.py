"""API keys. Each key acts as its own hidden user (type "api-key"), which carries the key's group.

Only a SHA-256 of the key is stored: the key is 32 random bytes, so a slow hash adds nothing, and
the 7-character prefix (unique) finds the row before a constant-time comparison of the hashes.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, UTCDateTime, utcnow
from .user import User


class ApiKey(Base):
    __tablename__ = "api_key"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    key_prefix: Mapped[str] = mapped_column(String(7), unique=True)
    name: Mapped[str] = mapped_column(String(254), unique=True)
    scope: Mapped[str | None] = mapped_column(String(64))
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    updated_by_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)

    user: Mapped[User] = relationship(foreign_keys=[user_id])
    updated_by: Mapped[User | None] = relationship(foreign_keys=[updated_by_id])
