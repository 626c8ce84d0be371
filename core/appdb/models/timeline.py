"""Timelines and their events: dated annotations that charts of a collection's questions show.

A timeline lives in a collection (NULL: the root) and takes its permissions from it; an event
belongs to one timeline and follows it. Deleting a timeline deletes its events (ON DELETE CASCADE).
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, new_entity_id, utcnow


class Timeline(Base):
    __tablename__ = "timeline"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)
    icon: Mapped[str | None] = mapped_column(String(128))
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collection.id", ondelete="CASCADE"), index=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    default: Mapped[bool] = mapped_column(Boolean, default=False)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class TimelineEvent(Base):
    __tablename__ = "timeline_event"
    __table_args__ = (Index("ix_timeline_event_timeline_id_timestamp", "timeline_id", "timestamp"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    timeline_id: Mapped[int] = mapped_column(ForeignKey("timeline.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    # False: only the date counts (the range filter compares dates, charts show a day).
    time_matters: Mapped[bool] = mapped_column(Boolean, default=False)
    timezone: Mapped[str] = mapped_column(String(255))
    icon: Mapped[str | None] = mapped_column(String(128))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
