"""Segments and legacy metrics: saved MBQL fragments of one table.

A segment's `definition` is a filter fragment (`{"filter": ...}`), a legacy metric's an aggregation
with an optional filter (`{"aggregation": [...], "filter": ...}`). Column names follow Metabase's
`segment`, `metric` and `metric_important_field` tables. Since Metabase v0.50 the MBQL `metric` clause
names a card of type "metric"; the legacy `metric` rows are kept for old clients' CRUD and revisions.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, new_entity_id, utcnow


class _Definition:
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    definition: Mapped[dict] = mapped_column(default=dict)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    caveats: Mapped[str | None] = mapped_column(Text)
    points_of_interest: Mapped[str | None] = mapped_column(Text)
    show_in_getting_started: Mapped[bool] = mapped_column(Boolean, default=False)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Segment(_Definition, Base):
    __tablename__ = "segment"
    __entity_type__ = "segment"

    table_id: Mapped[int] = mapped_column(ForeignKey("metabase_table.id", ondelete="CASCADE"), index=True)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id"))


class LegacyMetric(_Definition, Base):
    __tablename__ = "metric"
    __entity_type__ = "metric"

    table_id: Mapped[int] = mapped_column(ForeignKey("metabase_table.id", ondelete="CASCADE"), index=True)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id"))
    how_is_this_calculated: Mapped[str | None] = mapped_column(Text)


class MetricImportantField(Base):
    """The (at most three) fields the getting-started guide shows next to a legacy metric."""

    __tablename__ = "metric_important_field"
    __table_args__ = (UniqueConstraint("metric_id", "field_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    metric_id: Mapped[int] = mapped_column(ForeignKey("metric.id", ondelete="CASCADE"), index=True)
    field_id: Mapped[int] = mapped_column(ForeignKey("metabase_field.id", ondelete="CASCADE"))
