"""Running a card where a dashboard shows it: POST /api/dashboard/:did/dashcard/:dcid/card/:cid/query,
its downloads and its pivot form.

The dashcard must sit on the dashboard and the card must be its card or one of its series (404
otherwise: no route to another dashboard's data). Reading needs the dashboard's and the card's
collections readable; the data itself is the processor's gate (core.query.access), as for any
saved card. Each dashboard filter value reaches the card through the dashcard's parameter_mappings
for that card; core.query.parameters then applies it to MBQL and native queries alike.
"""
from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb import memo, rows
from core.appdb.models import Card, User
from core.content.cards import pivot_column_split
from core.export.response import PICTURE_FORMATS, card_download
from core.http.api import json_response
from core.http.errors import Forbidden, Invalid, NotFound, check_404
from core.policy import audience
from core.policy import permissions as perms
from core.query import pivot as pivot_query
from core.query import processor

from .lookup import get_dashboard, readable_dashboard
from .models import Dashboard, DashboardCard, DashboardCardSeries

# Operator filters take a list; embedding sends a lone value (Metabase wraps it).
OPERATOR_PREFIXES = ("string/", "number/")


def dashcard_card(session: Session, user: User, dashboard_id: int, dashcard_id: int,
                  card_id: int) -> tuple[Dashboard, DashboardCard, Card]:
    """The dashboard, its dashcard and the card drawn on it (the dashcard's own or a series card)."""
    dashboard = readable_dashboard(session, user, dashboard_id)
    dashcard, card = card_on(session, dashboard, dashcard_id, card_id)
    if not perms.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    return dashboard, dashcard, card


def card_on(session: Session, dashboard: Dashboard, dashcard_id: int, card_id: int) -> tuple[DashboardCard, Card]:
    """The dashcard and the card it draws (its own or a series card), 404 unless both are on `dashboard`."""
    dashcard = rows.get(session, DashboardCard, dashcard_id) if dashcard_id < 2**31 else None
    if dashcard is None or dashcard.dashboard_id != dashboard.id:
        raise NotFound()
    if dashcard.card_id != card_id and session.scalar(
            select(DashboardCardSeries.id).where(DashboardCardSeries.dashboardcard_id == dashcard.id,
                                                 DashboardCardSeries.card_id == card_id)) is None:
        raise NotFound()
    return dashcard, check_404(rows.get(session, Card, card_id))


def mapping_for(dashcard: DashboardCard, parameter_id: Any, card_id: int) -> dict | None:
    """The dashcard's mapping of a dashboard parameter onto one of its cards (a mapping without
    card_id is the dashcard's own card's)."""
    for mapping in dashcard.parameter_mappings or []:
        if not isinstance(mapping, dict) or mapping.get("parameter_id") != parameter_id:
            continue
        if mapping.get("card_id", dashcard.card_id) == card_id and mapping.get("target") is not None:
            return mapping
    return None


def resolve_parameters(dashboard: Dashboard, dashcard: DashboardCard, card_id: int,
                       given: list[dict] | None) -> list[dict]:
    """The card's parameters for this request: each given dashboard parameter (400 when the dashboard
    has no parameter with its id) and each dashboard default not given, with the mapping's target;
    parameters not mapped to this card are dropped."""
    declared = {p["id"]: p for p in dashboard.parameters or [] if isinstance(p, dict) and isinstance(p.get("id"), str)}
    merged: dict[Any, dict] = {}
    for pid, param in declared.items():
        if param.get("default") is not None:
            merged[pid] = {"id": pid, "value": param["default"]}
    for param in given or []:
        pid = param.get("id")
        if pid is None:
            raise Invalid("Unable to resolve invalid query parameter: parameter is missing :id")
        if not isinstance(pid, str) or pid not in declared:
            raise Invalid(f"Dashboard does not have a parameter with ID \"{pid}\".")
        if not isinstance(param.get("type", ""), (str, type(None))):
            raise Invalid(f"Invalid parameter type for parameter \"{pid}\".")
        merged[pid] = {k: v for k, v in param.items() if k != "default"}
    resolved = []
    for pid, param in merged.items():
        mapping = mapping_for(dashcard, pid, card_id)
        if mapping is None:
            continue
        declared_type = declared[pid].get("type")
        kind = param.get("type") or (declared_type if isinstance(declared_type, str) else None) or "category"
        out = {"type": kind, **param, "id": pid, "target": mapping["target"]}
        if "options" not in out and isinstance(declared[pid].get("options"), dict):
            out["options"] = declared[pid]["options"]
        value = out.get("value")
        if kind.startswith(OPERATOR_PREFIXES) and value not in (None, "") and not isinstance(value, list):
            out["value"] = [value]
        resolved.append(out)
    return resolved


def run(session: Session, user: User, ids: tuple[int, int, int], parameters: list | None, ignore_cache: bool):
    query, resolved, cache_ttl = run_inputs(session, user, ids, parameters)
    body, status = processor.run_json(
        session, user, query, context="dashboard", card_id=ids[2], dashboard_id=ids[0], parameters=resolved,
        ignore_cache=ignore_cache, cache_ttl=cache_ttl)
    return json_response(orjson.Fragment(body), status)


def run_inputs(session: Session, user: User, ids: tuple[int, int, int],
               parameters: list | None) -> tuple[dict, list, int | None]:
    """(query, resolved parameters, cache_ttl) of the dashcard's run by this user with these
    parameters, after the checks of dashcard_card and resolve_parameters, in their order (errors raised).
    What the dashboard, dashcard and card give a run is kept as JSON text while they are unchanged
    (core.appdb.memo), keyed by them and the parameters, not by the user: a repeated run loads none of
    them, and each user's checks are asked of the permission answers (core.policy.permissions), which are
    kept too. A missing dashcard or card and invalid parameters are kept as such and raised after the
    checks that come before them."""
    def compute():
        dashboard = get_dashboard(session, ids[0])  # 404 before any check: raised, never kept
        try:
            dashcard, card = card_on(session, dashboard, ids[1], ids[2])
        except NotFound:
            return _MISSING, None, (dashboard.collection_id, None, None)
        facts = (dashboard.collection_id, card.collection_id, card.cache_ttl)
        try:
            resolved = resolve_parameters(dashboard, dashcard, card.id, parameters)
        except Invalid as exc:
            return None, exc.message, facts
        try:
            return orjson.dumps([card.dataset_query, resolved]), None, facts
        except TypeError:  # integers beyond 64 bits: not kept
            return (card.dataset_query, resolved), None, facts

    try:
        key = ("dashcard run", *ids, orjson.dumps(parameters))
    except TypeError:
        key = None
    # `alone`, with the tables read declared: the answer is the rows', whoever asks.
    stored, invalid, (dashboard_collection, card_collection, cache_ttl) = compute() if key is None else \
        memo.get_or_compute(session, key, compute, keep=lambda value: not isinstance(value[0], tuple),
                            depends=_RUN_TABLES, alone=True)
    # Both collections' read rights, kept per audience (core.policy.audience.kept_answers).
    reads_dashboard, reads_card = audience.kept_answers(
        session, user, ("dashcard run rights", dashboard_collection, card_collection),
        lambda: (perms.can_read_item(session, user, dashboard_collection),
                 perms.can_read_item(session, user, card_collection)),
        (dashboard_collection, card_collection))
    if not reads_dashboard:
        raise Forbidden()
    if stored is _MISSING:
        raise NotFound()
    if not reads_card:
        raise Forbidden()
    if invalid is not None:
        raise Invalid(invalid)
    query, resolved = orjson.loads(stored) if isinstance(stored, bytes) else stored
    return query, resolved, cache_ttl


_MISSING = "missing"  # run_inputs' kept answer when the dashcard or the card is not on the dashboard
_RUN_TABLES = (Dashboard.__tablename__, DashboardCard.__tablename__, DashboardCardSeries.__tablename__,
               Card.__tablename__)


def export(session: Session, user: User, exporters: dict, ids: tuple[int, int, int], export_format: str,
           parameters: list | None, options: dict):
    dashboard, dashcard, card = dashcard_card(session, user, *ids)
    options = {**options, "visualization_settings": dashcard.visualization_settings}
    if export_format in PICTURE_FORMATS and card.id == dashcard.card_id:
        def run(series_card: Card):
            if not perms.can_read_item(session, user, series_card.collection_id):
                return None  # a series card the user may not read is left out, as the dashboard shows it
            return processor.run_query(
                session, user, series_card.dataset_query, context="dashboard", card_id=series_card.id,
                dashboard_id=dashboard.id, ignore_cache=False, cache_ttl=series_card.cache_ttl,
                parameters=resolve_parameters(dashboard, dashcard, series_card.id, parameters))
        options["series"] = series_results(session, dashboard, dashcard, run)
    return card_download(session, user, exporters, export_format, card, options, api_context="dashboard",
                         dashboard_id=dashboard.id,
                         parameters=resolve_parameters(dashboard, dashcard, card.id, parameters))


def series_results(session: Session, dashboard: Dashboard, dashcard: DashboardCard, run) -> list[tuple[dict, dict]]:
    """The dashcard's series cards with their results ((card, result) pairs), for its chart picture to draw
    them combined with its card as the dashboard shows it (core.charts.combine). `run(card)` answers the
    processor's (envelope, status), or None for a card left out; a failed run is left out too."""
    from .dashcards import load_layout

    found = []
    for card_id in load_layout(session, dashboard.id).series.get(dashcard.id, []):
        _, card = card_on(session, dashboard, dashcard.id, card_id)
        ran = run(card)
        if ran is None:
            continue
        envelope, status = ran
        if status < 300 and isinstance(envelope, dict) and envelope.get("status") != "failed":
            found.append(({"name": card.name, "display": card.display,
                           "visualization_settings": card.visualization_settings or {}}, envelope))
    return found


def pivot(session: Session, user: User, ids: tuple[int, int, int], parameters: list | None):
    dashboard, dashcard, card = dashcard_card(session, user, *ids)
    query = {**card.dataset_query, "parameters": resolve_parameters(dashboard, dashcard, card.id, parameters)}
    envelope, status = pivot_query.run_pivot(session, user, query, column_split=pivot_column_split(card),
                                             context="dashboard", card_id=card.id, dashboard_id=dashboard.id)
    return json_response(envelope, status)
