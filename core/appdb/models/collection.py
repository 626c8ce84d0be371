"""Collections: the tree that holds cards, dashboards and snippets, and users' personal collections.

`location` is the materialised path of ancestor ids ("/" for top level, "/4/9/" below 9 below 4),
as Metabase stores it, so subtree queries are a LIKE on one indexed column.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, new_entity_id, utcnow


class Collection(Base):
    __tablename__ = "collection"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    color: Mapped[str | None] = mapped_column(String(7))
    slug: Mapped[str | None] = mapped_column(String(510))
    location: Mapped[str] = mapped_column(String(254), default="/", index=True)
    namespace: Mapped[str | None] = mapped_column(String(254))
    authority_level: Mapped[str | None] = mapped_column(String(255))
    type: Mapped[str | None] = mapped_column(String(64))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_directly: Mapped[bool | None] = mapped_column(Boolean)
    # Shared by a collection and everything archived with it, so unarchiving restores exactly that set.
    archive_operation_id: Mapped[str | None] = mapped_column(String(36))
    is_sample: Mapped[bool] = mapped_column(Boolean, default=False)
    personal_owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("core_user.id", ondelete="CASCADE"), unique=True
    )
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
