"""Scheduled jobs and the history of their runs (Metabase's task history)."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UTCDateTime, utcnow


class ScheduledJob(Base):
    """One job of a registered kind (core.assembly.records.JobKind), keyed by (kind, key), run on a cron.

    `next_fire` is the next occurrence in whole seconds since the epoch (None: not computed yet). A
    runner claims an occurrence by moving it forward with a compare-and-set UPDATE, so each occurrence
    runs once however many schedulers share the app DB (core.schedule.runner).
    """

    __tablename__ = "scheduled_job"
    __table_args__ = (UniqueConstraint("kind", "key"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(100))
    key: Mapped[str] = mapped_column(String(254))
    # Quartz's seven fields (seconds minutes hours day-of-month month day-of-week year), as Metabase stores them.
    cron: Mapped[str] = mapped_column(String(120))
    # An IANA zone; None: the `report-timezone` setting when the next occurrence is computed, else UTC.
    timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    args: Mapped[dict] = mapped_column(default=dict)
    next_fire: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)
    # The zone next_fire was computed in: a changed report-timezone recomputes it.
    fire_zone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class TaskHistory(Base):
    """One run of a job, as GET /api/task/ lists it: status started -> success | failed."""

    __tablename__ = "task_history"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    task: Mapped[str] = mapped_column(String(254), index=True)
    db_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)
    job_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True, index=True)
    # The occurrence this run belongs to (seconds since the epoch); None for runs started by hand.
    fire_time: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    ended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    duration: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # milliseconds
    status: Mapped[str] = mapped_column(String(21), default="started")
    task_details: Mapped[dict | None] = mapped_column(nullable=True)
    instance: Mapped[str | None] = mapped_column(Text, nullable=True)
