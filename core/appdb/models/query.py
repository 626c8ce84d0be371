"""What running queries leaves behind: SQL snippets, cached results, per-query statistics and the
execution log (audit).

`Query` is keyed by the query hash (SHA-256 of the normalised query, as Metabase's `query` table)
and keeps the running average execution time; `QueryExecution` is one row per run; `QueryCache`
holds serialised results for the cache wrapper.
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, new_entity_id, utcnow


class NativeQuerySnippet(Base):
    __tablename__ = "native_query_snippet"
    __entity_type__ = "snippet"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254), unique=True)
    description: Mapped[str | None] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    # Snippet folders are collections of the "snippets" namespace.
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collection.id", ondelete="SET NULL"), index=True)
    template_tags: Mapped[dict | None] = mapped_column(default=None)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Query(Base):
    """Statistics per distinct query: the running average feeds `average_execution_time`."""

    __tablename__ = "query"

    query_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    average_execution_time: Mapped[int] = mapped_column(Integer)
    query: Mapped[dict | None] = mapped_column(default=None)


class QueryCache(Base):
    __tablename__ = "query_cache"

    query_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    results: Mapped[bytes] = mapped_column(LargeBinary)


class QueryExecution(Base):
    """One row per query run (Metabase's query_execution), written by the audit wrapper."""

    __tablename__ = "query_execution"
    # A card's run statistics (plugins.cards.serialize) are read from the first index alone, a user's
    # recent cards and dashboards (plugins.activity.service) from the other two, by seeks; those two lead
    # with executor_id, so the foreign key needs no index of its own.
    __table_args__ = (Index("ix_query_execution_card_runs", "card_id", "cache_hit", "started_at", "running_time"),
                      Index("ix_query_execution_recent_cards", "executor_id", "context", "card_id", "started_at",
                            "dashboard_id"),
                      Index("ix_query_execution_recent_dashboards", "executor_id", "context", "dashboard_id",
                            "started_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), index=True)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    running_time: Mapped[int] = mapped_column(Integer, default=0)
    result_rows: Mapped[int] = mapped_column(Integer, default=0)
    native: Mapped[bool] = mapped_column(Boolean, default=False)
    context: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    executor_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    card_id: Mapped[int | None] = mapped_column(Integer)
    dashboard_id: Mapped[int | None] = mapped_column(Integer)
    database_id: Mapped[int | None] = mapped_column(Integer)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
