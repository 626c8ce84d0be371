"""Cards (saved questions, models and metrics), the revision history of content, and model persistence.

Column names follow Metabase's `report_card`, `revision` and `persisted_info` so that API shapes map
one to one. `dataset_query` is stored exactly as it was posted (legacy or current MBQL, native): the
query layer normalises on every run, never on save, because clients expect their own shape back.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, new_entity_id, utcnow

CARD_TYPES = ("question", "model", "metric")


class Card(Base):
    __tablename__ = "report_card"
    __entity_type__ = "card"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    display: Mapped[str] = mapped_column(String(254))
    dataset_query: Mapped[dict] = mapped_column(default=dict)
    visualization_settings: Mapped[dict] = mapped_column(default=dict)
    parameters: Mapped[list] = mapped_column(default=list)
    parameter_mappings: Mapped[list] = mapped_column(default=list)
    result_metadata: Mapped[list | None] = mapped_column(default=None)
    # "question", "model" or "metric" (CARD_TYPES); the API also derives the legacy `dataset` flag.
    type: Mapped[str] = mapped_column(String(16), default="question")
    collection_id: Mapped[int | None] = mapped_column(
        ForeignKey("collection.id", ondelete="SET NULL"), index=True
    )
    collection_position: Mapped[int | None] = mapped_column(Integer)
    collection_preview: Mapped[bool] = mapped_column(Boolean, default=True)
    cache_ttl: Mapped[int | None] = mapped_column(Integer)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_directly: Mapped[bool] = mapped_column(Boolean, default=False)
    enable_embedding: Mapped[bool] = mapped_column(Boolean, default=False)
    embedding_params: Mapped[dict | None] = mapped_column(default=None)
    public_uuid: Mapped[str | None] = mapped_column(String(36), unique=True)
    made_public_by_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    initially_published_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id"), index=True)
    # Derived from dataset_query on every save (query_type "native" or "query").
    database_id: Mapped[int | None] = mapped_column(
        ForeignKey("metabase_database.id", ondelete="CASCADE"), index=True
    )
    table_id: Mapped[int | None] = mapped_column(ForeignKey("metabase_table.id", ondelete="SET NULL"))
    source_card_id: Mapped[int | None] = mapped_column(
        ForeignKey("report_card.id", ondelete="SET NULL"), index=True
    )
    query_type: Mapped[str | None] = mapped_column(String(16))
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    view_count: Mapped[int] = mapped_column(Integer, default=0)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    cache_invalidated_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Revision(Base):
    """One saved state of an entity (`model` is "Card", "Dashboard", ...): the serialized object after
    the change. `most_recent` marks the latest row per (model, model_id)."""

    __tablename__ = "revision"
    __table_args__ = (Index("ix_revision_model_model_id", "model", "model_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    model: Mapped[str] = mapped_column(String(16))
    model_id: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    timestamp: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    object: Mapped[dict] = mapped_column(default=dict)
    is_reversion: Mapped[bool] = mapped_column(Boolean, default=False)
    is_creation: Mapped[bool] = mapped_column(Boolean, default=False)
    message: Mapped[str | None] = mapped_column(Text)
    most_recent: Mapped[bool] = mapped_column(Boolean, default=False)
    metabase_version: Mapped[str | None] = mapped_column(String(100))


class PersistedInfo(Base):
    """A model's persisted copy: the table its result was written to in its own database.

    `state` follows Metabase: creating, persisted, refreshing, error, deletable, off.
    """

    __tablename__ = "persisted_info"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    database_id: Mapped[int] = mapped_column(ForeignKey("metabase_database.id", ondelete="CASCADE"), index=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), unique=True)
    question_slug: Mapped[str] = mapped_column(Text)
    schema_name: Mapped[str | None] = mapped_column(Text)
    table_name: Mapped[str] = mapped_column(Text)
    definition: Mapped[dict | None] = mapped_column(default=None)
    query_hash: Mapped[str | None] = mapped_column(Text)
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(32), default="creating")
    refresh_begin: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    refresh_end: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    state_change_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
