"""A dashboard's layout: reading its tabs, dashcards and series, and making them equal a desired set.

`sync` is the one writer, used by PUT /api/dashboard/:id, the deprecated PUT .../cards, revert and
save. Its input is Metabase's: the full desired lists, where a negative (or unknown) id makes a new
tab or dashcard, a missing one is deleted and the others are updated; tab positions come from the
list order, and dashcards naming a new tab by its temporary id are moved onto the tab created for it.
Everything is checked before the first write, so a refused request writes nothing.

Dashcards whose card is archived are hidden, as Metabase's hydration hides them: they are not shown,
and a desired set that omits them does not delete them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import bindparam, delete, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.appdb.models.base import new_entity_id
from core.http.errors import Archived, Forbidden, Invalid, NotFound
from core.policy import permissions

from . import mappings
from .models import DashboardCard, DashboardCardSeries, DashboardTab

TAB_REQUIRED = "This dashboard has tab, makes sure every card has a tab"
# Columns a dashcard update may set (the rest are the row's bookkeeping).
DASHCARD_KEYS = ("card_id", "action_id", "dashboard_tab_id", "size_x", "size_y", "row", "col",
                 "parameter_mappings", "visualization_settings")
DEFAULTS = {"card_id": None, "action_id": None, "parameter_mappings": [], "visualization_settings": {}}


@dataclass
class Layout:
    tabs: list[DashboardTab]
    dashcards: list[DashboardCard]
    series: dict[int, list[int]] = field(default_factory=dict)  # dashcard id -> card ids, in order
    cards: dict[int, Card] = field(default_factory=dict)  # every card a dashcard or a series names


# A dashboard's GET runs these four: built once, with bind parameters (building them cost as much as running them).
_TABS = (select(DashboardTab).where(DashboardTab.dashboard_id == bindparam("dashboard_id"))
         .order_by(DashboardTab.position, DashboardTab.id))
_DASHCARDS = (select(DashboardCard).outerjoin(Card, Card.id == DashboardCard.card_id)
              .where(DashboardCard.dashboard_id == bindparam("dashboard_id"),
                     or_(DashboardCard.card_id.is_(None), Card.archived.is_(False)))
              .order_by(DashboardCard.id))
_SERIES = (select(DashboardCardSeries.dashboardcard_id, DashboardCardSeries.card_id)
           .where(DashboardCardSeries.dashboardcard_id.in_(bindparam("ids", expanding=True)))
           .order_by(DashboardCardSeries.position, DashboardCardSeries.id))
_CARDS = select(Card).where(Card.id.in_(bindparam("ids", expanding=True)))


def load_layout(session: Session, dashboard_id: int) -> Layout:
    tabs = list(session.scalars(_TABS, {"dashboard_id": dashboard_id}))
    dashcards = list(session.scalars(_DASHCARDS, {"dashboard_id": dashboard_id}))
    series: dict[int, list[int]] = {}
    if dashcards:
        for dashcard_id, card_id in session.execute(_SERIES, {"ids": [d.id for d in dashcards]}):
            series.setdefault(dashcard_id, []).append(card_id)
    card_ids = {d.card_id for d in dashcards if d.card_id is not None} | {i for ids in series.values() for i in ids}
    cards = {c.id: c for c in session.scalars(_CARDS, {"ids": sorted(card_ids)})} if card_ids else {}
    return Layout(tabs, dashcards, series, cards)


# --------------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------------


def _readable_card(session: Session, user: User, card_id: int) -> Card:
    """A card put on a dashboard: 404 missing, 403 unreadable, 404 archived (Metabase's read-check and
    check-not-archived)."""
    card = session.get(Card, card_id) if card_id < 2**31 else None
    if card is None:
        raise NotFound()
    if not permissions.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    if card.archived:
        raise Archived()
    return card


def _check(session: Session, user: User, layout: Layout, dashcards: list[dict]) -> None:
    """Cards newly placed (as a dashcard's card or in its series) must be readable; mappings newly
    added need query permission on the tables they reach."""
    current = {d.id: d for d in layout.dashcards}
    new_mappings: list[tuple[dict, int | None]] = []
    for wanted in dashcards:
        existing = current.get(wanted["id"])
        card_id = wanted.get("card_id", existing.card_id if existing is not None else None)
        if card_id is not None and (existing is None or card_id != existing.card_id):
            _readable_card(session, user, card_id)
        old_series = layout.series.get(existing.id, []) if existing is not None else []
        for series_id in wanted.get("series") or []:
            if series_id not in old_series:
                _readable_card(session, user, series_id)
        old_mappings = (existing.parameter_mappings or []) if existing is not None else []
        for mapping in wanted.get("parameter_mappings") or []:
            if mapping not in old_mappings:
                new_mappings.append((mapping, card_id))
    mappings.check_new_mappings(session, user, new_mappings)


def _existing_cards(session: Session, dashcards: list[dict]) -> list[dict]:
    """For a revert: dashcards and series whose cards are gone since are left out."""
    ids = {d["card_id"] for d in dashcards if isinstance(d.get("card_id"), int)}
    ids |= {i for d in dashcards for i in (d.get("series") or []) if isinstance(i, int)}
    alive = set(session.scalars(select(Card.id).where(Card.id.in_(ids)))) if ids else set()
    out = []
    for d in dashcards:
        if d.get("card_id") is not None and d["card_id"] not in alive:
            continue
        out.append({**d, "series": [i for i in (d.get("series") or []) if i in alive]})
    return out


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------


def sync(session: Session, user: User, dashboard_id: int, tabs: list[dict] | None, dashcards: list[dict] | None,
         *, check: bool = True) -> None:
    """Make the dashboard's tabs (`[{id, name}]`) and dashcards (dicts of DASHCARD_KEYS present, plus
    `id` and `series` as card ids) equal the given lists; None leaves that list as it is. With
    `check=False` (a revert) nothing is refused: missing cards are skipped, stray tabs fixed."""
    layout = load_layout(session, dashboard_id)
    current_tabs = {t.id: t for t in layout.tabs}
    current = {d.id: d for d in layout.dashcards}
    final_tabs = list(current_tabs) if tabs is None else [t["id"] for t in tabs]
    removed_tabs = set(current_tabs) - set(final_tabs)
    if dashcards is None:
        dashcards = [{"id": d.id} for d in layout.dashcards if d.dashboard_tab_id not in removed_tabs]
    elif not check:
        dashcards = _existing_cards(session, dashcards)
    else:
        _check(session, user, layout, dashcards)
    tab_of = {}
    for wanted in dashcards:
        existing = current.get(wanted["id"])
        tab = wanted.get("dashboard_tab_id", existing.dashboard_tab_id if existing is not None else None)
        if not final_tabs:
            tab = None
        elif tab not in final_tabs:
            if check:
                raise Invalid(TAB_REQUIRED if tab is None else
                              {"dashboard_tab_id": f"Tab {tab} is not one of this dashboard's tabs."})
            tab = final_tabs[0]
        tab_of[wanted["id"]] = tab

    real_tab = _write_tabs(session, dashboard_id, current_tabs, tabs)
    kept = {w["id"] for w in dashcards if w["id"] in current}
    for wanted in dashcards:
        values = {k: wanted[k] for k in DASHCARD_KEYS if k in wanted}
        values["dashboard_tab_id"] = real_tab.get(tab_of[wanted["id"]], tab_of[wanted["id"]])
        existing = current.get(wanted["id"])
        if existing is None:
            existing = DashboardCard(dashboard_id=dashboard_id, entity_id=new_entity_id(), **{**DEFAULTS, **values})
            session.add(existing)
            session.flush()
            _write_series(session, existing.id, [], wanted.get("series") or [])
            continue
        for key, value in values.items():
            if getattr(existing, key) != value:
                setattr(existing, key, value)
        if wanted.get("series") is not None:
            _write_series(session, existing.id, layout.series.get(existing.id, []), wanted["series"])
    gone = [d.id for d in layout.dashcards if d.id not in kept]
    if removed_tabs:
        gone += list(session.scalars(select(DashboardCard.id).where(DashboardCard.dashboard_tab_id.in_(removed_tabs))))
    if gone:
        session.execute(delete(DashboardCardSeries).where(DashboardCardSeries.dashboardcard_id.in_(gone)))
        session.execute(delete(DashboardCard).where(DashboardCard.id.in_(gone)))
    if removed_tabs:
        session.execute(delete(DashboardTab).where(DashboardTab.id.in_(removed_tabs)))
    session.flush()
    session.expire_all()


def _write_tabs(session: Session, dashboard_id: int, current: dict[int, DashboardTab],
                tabs: list[dict] | None) -> dict[int, int]:
    """Create, rename and reorder tabs; returns temporary id -> real id for the tabs created."""
    created: dict[int, int] = {}
    for position, wanted in enumerate(tabs or []):
        tab = current.get(wanted["id"])
        if tab is None:
            tab = DashboardTab(dashboard_id=dashboard_id, name=wanted["name"], position=position,
                               entity_id=new_entity_id())
            session.add(tab)
            session.flush()
            created[wanted["id"]] = tab.id
            continue
        if tab.name != wanted["name"]:
            tab.name = wanted["name"]
        if tab.position != position:
            tab.position = position
    return created


def _write_series(session: Session, dashcard_id: int, old: list[int], new: list[int]) -> None:
    if old == new:
        return
    session.execute(delete(DashboardCardSeries).where(DashboardCardSeries.dashboardcard_id == dashcard_id))
    for position, card_id in enumerate(new):
        session.add(DashboardCardSeries(dashboardcard_id=dashcard_id, card_id=card_id, position=position))
    session.flush()


def dashcard_rows(layout: Layout) -> list[dict]:
    """The dashcards as stored (what a revision keeps): columns and series card ids."""
    return [{"id": d.id, "card_id": d.card_id, "action_id": d.action_id, "dashboard_tab_id": d.dashboard_tab_id,
             "size_x": d.size_x, "size_y": d.size_y, "row": d.row, "col": d.col,
             "parameter_mappings": d.parameter_mappings or [], "visualization_settings": d.visualization_settings or {},
             "series": list(layout.series.get(d.id, []))} for d in layout.dashcards]


def tab_rows(layout: Layout) -> list[dict]:
    return [{"id": t.id, "name": t.name, "position": t.position} for t in layout.tabs]
