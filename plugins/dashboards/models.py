"""The dashboard tables: dashboards, their tabs, their cards (dashcards), the extra cards drawn on a
dashcard (series) and users' dashboard bookmarks.

Column names follow Metabase's `report_dashboard`, `dashboard_tab`, `report_dashboardcard`,
`dashboardcard_series` and `dashboard_bookmark`, so API shapes map one to one. A dashcard's
`parameter_mappings` is kept as the list the client sent (Metabase stores it the same way): each
`{parameter_id, card_id, target}` says which card parameter or column a dashboard filter drives.
The migration is this plugin's own (plugins/dashboards/migrations).
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.appdb import search_engines
from core.appdb.models import Base, UTCDateTime, utcnow
from core.appdb.models.base import new_entity_id


class Dashboard(Base):
    __tablename__ = "report_dashboard"
    __entity_type__ = "dashboard"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(254))
    description: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[int] = mapped_column(ForeignKey("core_user.id"), index=True)
    parameters: Mapped[list] = mapped_column(default=list)
    points_of_interest: Mapped[str | None] = mapped_column(Text)
    caveats: Mapped[str | None] = mapped_column(Text)
    show_in_getting_started: Mapped[bool] = mapped_column(Boolean, default=False)
    collection_id: Mapped[int | None] = mapped_column(
        ForeignKey("collection.id", ondelete="SET NULL"), index=True
    )
    collection_position: Mapped[int | None] = mapped_column(Integer)
    position: Mapped[int | None] = mapped_column(Integer)
    # "fixed" or "full"
    width: Mapped[str] = mapped_column(String(16), default="fixed")
    auto_apply_filters: Mapped[bool] = mapped_column(Boolean, default=True)
    cache_ttl: Mapped[int | None] = mapped_column(Integer)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_directly: Mapped[bool] = mapped_column(Boolean, default=False)
    enable_embedding: Mapped[bool] = mapped_column(Boolean, default=False)
    embedding_params: Mapped[dict | None] = mapped_column(default=None)
    public_uuid: Mapped[str | None] = mapped_column(String(36), unique=True)
    made_public_by_id: Mapped[int | None] = mapped_column(ForeignKey("core_user.id", ondelete="SET NULL"))
    initially_published_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    view_count: Mapped[int] = mapped_column(Integer, default=0)
    last_viewed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class DashboardTab(Base):
    __tablename__ = "dashboard_tab"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("report_dashboard.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(254))
    position: Mapped[int] = mapped_column(Integer, default=0)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class DashboardCard(Base):
    """A card placed on a dashboard, or a virtual card (text, heading, link: `card_id` null and
    `visualization_settings.virtual_card` set). `action_id` points at an action once actions exist."""

    __tablename__ = "report_dashboardcard"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("report_dashboard.id", ondelete="CASCADE"), index=True)
    dashboard_tab_id: Mapped[int | None] = mapped_column(
        ForeignKey("dashboard_tab.id", ondelete="CASCADE"), index=True
    )
    card_id: Mapped[int | None] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    action_id: Mapped[int | None] = mapped_column(Integer)
    size_x: Mapped[int] = mapped_column(Integer, default=4)
    size_y: Mapped[int] = mapped_column(Integer, default=4)
    row: Mapped[int] = mapped_column(Integer, default=0)
    col: Mapped[int] = mapped_column(Integer, default=0)
    parameter_mappings: Mapped[list] = mapped_column(default=list)
    visualization_settings: Mapped[dict] = mapped_column(default=dict)
    entity_id: Mapped[str | None] = mapped_column(String(21), unique=True, default=new_entity_id)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class DashboardCardSeries(Base):
    """One more card drawn on a dashcard (a combined chart), in `position` order."""

    __tablename__ = "dashboardcard_series"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dashboardcard_id: Mapped[int] = mapped_column(
        ForeignKey("report_dashboardcard.id", ondelete="CASCADE"), index=True
    )
    card_id: Mapped[int] = mapped_column(ForeignKey("report_card.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)


class DashboardBookmark(Base):
    __tablename__ = "dashboard_bookmark"
    __table_args__ = (UniqueConstraint("user_id", "dashboard_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("core_user.id", ondelete="CASCADE"), index=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("report_dashboard.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

# Migration dashboards_0002's triggers write the search index on every write of report_dashboard.
search_engines.indexed("report_dashboard")
