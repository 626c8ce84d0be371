"""The subscription tables: pulses (a legacy pulse, a dashboard subscription when `dashboard_id` is
set, an alert when `alert_condition` is set; /api/notification serves all three), the cards each sends, its channels (e-mail, Slack, webhook, each with its own schedule) and a
channel's user recipients.

Column names follow Metabase's `pulse`, `pulse_card`, `pulse_channel` and `pulse_channel_recipient`.
Raw e-mail recipients are kept in `pulse_channel.details["emails"]`, as Metabase keeps them.
`dashboard_id` and `dashboard_card_id` point into the dashboards plugin's tables and carry no foreign
key: a plugin's tables reference only the core's (docs/ARCHITECTURE.md, App DB).
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from core.appdb.models import Base, UTCDateTime, utcnow
from core.appdb.models.base import new_entity_id


class Pulse(Base):
    __tablename__ = "pulse"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    name: Mapped[str | None] = mapped_column(String(254))
    skip_if_empty: Mapped[bool] = mapped_column(Boolean, default=False)
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collection.id", ondelete="SET NULL"), index=True)
    collection_position: Mapped[int | None] = mapped_column(Integer)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    dashboard_id: Mapped[int | None] = mapped_column(Integer, index=True)
    parameters: Mapped[list] = mapped_column(default=list)
    # set on alerts (Metabase's pulse columns of the same names): "rows" or "goal"; a pulse has None
    alert_condition: Mapped[str | None] = mapped_column(String(32))
    alert_above_goal: Mapped[bool | None] = mapped_column(Boolean)
    alert_first_only: Mapped[bool | None] = mapped_column(Boolean)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class PulseCard(Base):
    __tablename__ = "pulse_card"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pulse_id: Mapped[int] = mapped_column(ForeignKey("pulse.id", ondelete="CASCADE"), index=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    include_csv: Mapped[bool] = mapped_column(Boolean, default=False)
    include_xls: Mapped[bool] = mapped_column(Boolean, default=False)
    format_rows: Mapped[bool] = mapped_column(Boolean, default=True)
    pivot_results: Mapped[bool] = mapped_column(Boolean, default=False)
    dashboard_card_id: Mapped[int | None] = mapped_column(Integer)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)


class PulseChannel(Base):
    __tablename__ = "pulse_channel"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pulse_id: Mapped[int] = mapped_column(ForeignKey("pulse.id", ondelete="CASCADE"), index=True)
    # "email", "slack" or "http"
    channel_type: Mapped[str] = mapped_column(String(32))
    channel_id: Mapped[int | None] = mapped_column(Integer)
    details: Mapped[dict] = mapped_column(default=dict)
    # "hourly", "daily", "weekly" or "monthly"; hour 0-23; day "mon".."sun"; frame "first", "mid", "last"
    schedule_type: Mapped[str] = mapped_column(String(32))
    schedule_hour: Mapped[int | None] = mapped_column(Integer)
    schedule_day: Mapped[str | None] = mapped_column(String(64))
    schedule_frame: Mapped[str | None] = mapped_column(String(32))
    # a Quartz cron from /api/notification; when set it is the schedule (the schedule_* columns then
    # hold its nearest reading for /api/pulse and /api/alert)
    cron_schedule: Mapped[str | None] = mapped_column(String(128))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class PulseChannelRecipient(Base):
    __tablename__ = "pulse_channel_recipient"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pulse_channel_id: Mapped[int] = mapped_column(ForeignKey("pulse_channel.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)


class Channel(Base):
    """A notification destination of Metabase's `channel` table (/api/channel): today only webhooks
    (type "channel/http"), which a pulse channel of channel_type "http" names by `channel_id`."""

    __tablename__ = "channel"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254), unique=True)
    description: Mapped[str | None] = mapped_column(Text)
    type: Mapped[str] = mapped_column(String(32))
    # {"url", "method", "auth-method", "auth-info", "fe-form-type"}; auth-info values are secrets
    details: Mapped[dict] = mapped_column(default=dict)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
