"""Bookmarks: a user's starred cards and collections, and the order they chose for them.

As in Metabase, each bookmarkable kind has its own table (so the row goes when the item is deleted)
and `bookmark_ordering` keeps one position per (user, type, item_id). Dashboards get their
`dashboard_bookmark` table with the dashboard model.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, utcnow


class CardBookmark(Base):
    __tablename__ = "card_bookmark"
    __table_args__ = (UniqueConstraint("user_id", "card_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class CollectionBookmark(Base):
    __tablename__ = "collection_bookmark"
    __table_args__ = (UniqueConstraint("user_id", "collection_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collection.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class BookmarkOrdering(Base):
    """The user's order of their bookmarks; `type` is "card", "collection" or "dashboard"."""

    __tablename__ = "bookmark_ordering"
    __table_args__ = (UniqueConstraint("user_id", "type", "item_id"), UniqueConstraint("user_id", "ordering"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(255))
    item_id: Mapped[int] = mapped_column(Integer)
    ordering: Mapped[int] = mapped_column(Integer)
