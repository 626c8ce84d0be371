"""Copying a dashboard (POST /api/dashboard/:id/copy): its tabs, dashcards, series and filters, either
pointing at the same cards (shallow) or at duplicates of them (deep).

The copy's layout is the source's as the dashboard shows it (`dashcards.load_layout`: dashcards of
archived cards are hidden, so they are not copied) and is written by the layout's one writer,
`dashcards.sync`, with new temporary ids. A deep copy duplicates each card the caller can read into the
destination collection (models are referenced, not duplicated, as Metabase does) through
core.content.cards.duplicate, the same function the cards plugin copies with, and rewires dashcards,
series and parameter mappings to the duplicates. A dashcard whose card the caller cannot read is left
out and its cards listed in `uncopied` as `{id}` (never more: the caller may not see them). Everything is
written in one transaction, with the copy's creation revision.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.content import cards as content_cards
from core.content.collections import Access, check_target

from . import dashcards, revisions
from .lookup import readable_dashboard
from .models import Dashboard
from .serialize import dashboard_json


@dataclass
class Plan:
    """Which card each source card becomes in a deep copy (absent: left out) and what could not be copied."""

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
    layout = dashcards.load_layout(session, source.id)
    copy = Dashboard(
        name=name or source.name, description=description if description is not None else source.description,
        parameters=source.parameters or [], width=source.width, auto_apply_filters=source.auto_apply_filters,
        creator_id=user.id, collection_id=collection_id, collection_position=collection_position,
        entity_id=new_entity_id(),
    )
    session.add(copy)
    session.flush()
    plan = _duplicate_cards(session, Access(session, user), layout, collection_id) if deep else None
    # Negative ids are new rows to sync; tab -(i+1) is the copy of the source's i-th tab.
    temporary_tab = {tab.id: -(i + 1) for i, tab in enumerate(layout.tabs)}
    tabs = [{"id": temporary_tab[tab.id], "name": tab.name} for tab in layout.tabs]
    rows = []
    for row in dashcards.dashcard_rows(layout):
        row = _rewire(row, plan) if plan is not None else row
        if row is not None:
            rows.append({**row, "id": -(len(rows) + 1), "dashboard_tab_id": temporary_tab.get(row["dashboard_tab_id"])})
    dashcards.sync(session, user, copy.id, tabs, rows, check=False)
    copy = session.get(Dashboard, copy.id)
    revisions.record(session, user, copy, creation=True)
    session.commit()
    for card in plan.created if plan else ():
        events.emit("card-create", user.id, card)
    events.emit("dashboard-create", user.id, copy)
    return copy, [{"id": card_id} for card_id in plan.uncopied] if plan else []


def _duplicate_cards(session: Session, access: Access, layout: dashcards.Layout, collection_id: int | None) -> Plan:
    """Metabase's cards-to-copy: a dashcard's readable card and readable series are copied; an unreadable
    card takes its whole series with it into `uncopied` (there is nothing left to draw them on).
    Archived series cards are dropped, not revived as copies."""
    plan = Plan()
    wanted: list[int] = []

    def readable(card_id: int) -> bool:
        card = layout.cards.get(card_id)
        return card is not None and access.can_read(card.collection_id)

    for dashcard in layout.dashcards:
        if dashcard.card_id is None:
            continue
        ids = [dashcard.card_id, *layout.series.get(dashcard.id, [])]
        if not readable(dashcard.card_id):
            plan.uncopied.extend(ids)
            continue
        for card_id in ids:
            (wanted if readable(card_id) else plan.uncopied).append(card_id)
    for card_id in dict.fromkeys(wanted):
        card = layout.cards[card_id]
        if card.type == "model":
            plan.new_ids[card_id] = card_id
        elif not card.archived:
            same_place = card.collection_id == collection_id
            new = content_cards.duplicate(session, card, access.user.id,
                                          collection_id=collection_id,
                                          name=f"{card.name} - Duplicate" if same_place else card.name)
            plan.new_ids[card_id] = new.id
            plan.created.append(new)
    plan.uncopied = [i for i in dict.fromkeys(plan.uncopied) if i not in plan.new_ids]
    return plan


def _rewire(row: dict, plan: Plan) -> dict | None:
    """A dashcard row of the source pointing at the copies of its cards (None: its card was not copied).
    A virtual dashcard (no card) is copied as it is."""
    if row["card_id"] is None:
        return row
    if row["card_id"] not in plan.new_ids:
        return None
    mappings = []
    for mapping in row["parameter_mappings"]:
        if isinstance(mapping, dict) and isinstance(mapping.get("card_id"), int):
            if mapping["card_id"] not in plan.new_ids:
                continue
            mapping = {**mapping, "card_id": plan.new_ids[mapping["card_id"]]}
        mappings.append(mapping)
    return {**row, "card_id": plan.new_ids[row["card_id"]], "parameter_mappings": mappings,
            "series": [plan.new_ids[i] for i in row["series"] if i in plan.new_ids]}
