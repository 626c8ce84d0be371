"""Copying a dashboard (POST /api/dashboard/:id/copy): its tabs, dashcards, series and filters, either
pointing at the same cards (shallow) or at duplicates of them (deep).

A deep copy duplicates each card the caller can read into the destination collection (models are
referenced, not duplicated, as Metabase does) through core.content.cards.duplicate, the same function
the cards plugin copies with, and rewires dashcards, series and parameter mappings to the duplicates.
A dashcard whose card the caller cannot read is left out and its card listed in `uncopied` as `{id}`
(never more: the caller may not see it). Everything is written in one transaction.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.content import cards as content_cards
from core.content.collections import Access, check_target

from . import revisions
from .models import Dashboard, DashboardCard, DashboardCardSeries, DashboardTab
from .serialize import dashboard_json
from .service import readable_dashboard


@dataclass
class Plan:
    """Which card each source card becomes in the copy (absent: left out) and what could not be copied."""

    new_ids: dict[int, int] = field(default_factory=dict)
    uncopied: list[int] = field(default_factory=list)
    created: list[Card] = field(default_factory=list)


def copy_json(session: Session, user: User, dashboard_id: int, **options) -> dict:
    """POST /api/dashboard/:id/copy's answer: the new dashboard, with `uncopied` when cards were left out."""
    copy, uncopied = copy_dashboard(session, user, dashboard_id, **options)
    out = dashboard_json(session, user, copy)
    if uncopied:
        out["uncopied"] = uncopied
    return out


def copy_dashboard(session: Session, user: User, dashboard_id: int, *, name: str | None, description: str | None,
                   collection_id: int | None, collection_position: int | None, deep: bool) -> tuple[Dashboard, list]:
    """The new dashboard (committed) and the `uncopied` cards; read on the source and write on the
    destination collection (None: the root) are required."""
    source = readable_dashboard(session, user, dashboard_id)
    check_target(session, user, collection_id)
    access = Access(session, user)
    copy = Dashboard(
        name=name or source.name, description=description if description is not None else source.description,
        parameters=source.parameters or [], width=source.width, auto_apply_filters=source.auto_apply_filters,
        creator_id=user.id, collection_id=collection_id, collection_position=collection_position,
        entity_id=new_entity_id(),
    )
    session.add(copy)
    session.flush()
    tabs = _copy_tabs(session, source.id, copy.id)
    dashcards = list(session.scalars(select(DashboardCard).where(DashboardCard.dashboard_id == source.id)
                                     .order_by(DashboardCard.id)))
    series = _series(session, [d.id for d in dashcards])
    plan = _duplicate_cards(session, user, access, dashcards, series, collection_id) if deep else None
    for dashcard in dashcards:
        _copy_dashcard(session, copy.id, dashcard, series.get(dashcard.id, []), tabs, plan)
    revisions.record(session, user, copy, creation=True)
    session.commit()
    for card in plan.created if plan else ():
        events.emit("card-create", user.id, card)
    events.emit("dashboard-create", user.id, copy)
    return copy, [{"id": card_id} for card_id in plan.uncopied] if plan else []


def _copy_tabs(session: Session, source_id: int, copy_id: int) -> dict[int, int]:
    mapping = {}
    for tab in session.scalars(select(DashboardTab).where(DashboardTab.dashboard_id == source_id)
                               .order_by(DashboardTab.position, DashboardTab.id)):
        new = DashboardTab(dashboard_id=copy_id, name=tab.name, position=tab.position, entity_id=new_entity_id())
        session.add(new)
        session.flush()
        mapping[tab.id] = new.id
    return mapping


def _series(session: Session, dashcard_ids: list[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    if dashcard_ids:
        for row in session.scalars(select(DashboardCardSeries).where(DashboardCardSeries.dashboardcard_id
                                                                     .in_(dashcard_ids))
                                   .order_by(DashboardCardSeries.position, DashboardCardSeries.id)):
            out.setdefault(row.dashboardcard_id, []).append(row.card_id)
    return out


def _duplicate_cards(session: Session, user: User, access: Access, dashcards: list[DashboardCard],
                     series: dict[int, list[int]], collection_id: int | None) -> Plan:
    """Metabase's cards-to-copy: a dashcard's readable card and readable series are copied; an unreadable
    card takes its whole series with it into `uncopied` (there is nothing left to draw them on)."""
    plan = Plan()
    wanted: list[int] = []
    for dashcard in dashcards:
        if dashcard.card_id is None:
            continue
        ids = [dashcard.card_id, *series.get(dashcard.id, [])]
        cards = {c.id: c for c in session.scalars(select(Card).where(Card.id.in_(ids)))}
        main = cards.get(dashcard.card_id)
        if main is None or not access.can_read(main.collection_id):
            plan.uncopied.extend(ids)
            continue
        for card_id in ids:
            card = cards.get(card_id)
            if card is not None and access.can_read(card.collection_id):
                wanted.append(card_id)
            else:
                plan.uncopied.append(card_id)
    for card_id in dict.fromkeys(wanted):
        card = session.get(Card, card_id)
        if card.type == "model":
            plan.new_ids[card_id] = card_id
            continue
        same_place = card.collection_id == collection_id
        new = content_cards.duplicate(session, card, user.id, collection_id=collection_id,
                                      name=f"{card.name} - Duplicate" if same_place else card.name)
        plan.new_ids[card_id] = new.id
        plan.created.append(new)
    plan.uncopied = [i for i in dict.fromkeys(plan.uncopied) if i not in plan.new_ids]
    return plan


def _copy_dashcard(session: Session, copy_id: int, dashcard: DashboardCard, series: list[int],
                   tabs: dict[int, int], plan: Plan | None) -> None:
    card_id, mappings = dashcard.card_id, list(dashcard.parameter_mappings or [])
    if plan is not None and card_id is not None:
        if card_id not in plan.new_ids:
            return  # its card could not be copied: the dashcard is left out
        card_id = plan.new_ids[card_id]
        series = [plan.new_ids[i] for i in series if i in plan.new_ids]
        mappings = [_rewire(m, plan.new_ids) for m in mappings]
        mappings = [m for m in mappings if m is not None]
    new = DashboardCard(
        dashboard_id=copy_id, dashboard_tab_id=tabs.get(dashcard.dashboard_tab_id), card_id=card_id,
        action_id=dashcard.action_id, size_x=dashcard.size_x, size_y=dashcard.size_y, row=dashcard.row,
        col=dashcard.col, parameter_mappings=mappings, visualization_settings=dashcard.visualization_settings or {},
        entity_id=new_entity_id(),
    )
    session.add(new)
    session.flush()
    for position, series_card in enumerate(series):
        session.add(DashboardCardSeries(dashboardcard_id=new.id, card_id=series_card, position=position))


def _rewire(mapping, new_ids: dict[int, int]):
    """A parameter mapping pointing at the copy of its card (None: its card was not copied)."""
    if not isinstance(mapping, dict) or not isinstance(mapping.get("card_id"), int):
        return mapping
    if mapping["card_id"] not in new_ids:
        return None
    return {**mapping, "card_id": new_ids[mapping["card_id"]]}

