"""A dashboard as a shared object (core.assembly.records.Shareable "dashboard"): what plugins.sharing
serves of it for a public link or an embed. The viewer has no account: the dashboard's
core.query.access.SharedGrant runs its cards (each only on a dashcard of this dashboard: 404 otherwise)
and lists the values of the fields its filters are wired to, through core.query.processor. A dashcard's
chart picture (png, svg, pdf) draws its series cards combined with its card, as the dashboard shows it."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core import Shareable, SharedQuery
from core.content import public
from core.content.cards import pivot_column_split
from core.export.response import PICTURE_FORMATS, card_download
from core.policy.principal import current_tenant
from core.query import pivot as pivot_query
from core.query import processor
from core.query.access import SharedGrant

from . import params
from .dashcards import Layout, load_layout
from .models import Dashboard
from .queries import card_on, resolve_parameters, series_results
from .serialize import tab_json

# The query log's context of a public run (an embed passes its own in SharedQuery.context).
CONTEXT = "public-dashboard"


def _mapped_field_ids(layout: Layout) -> set[int]:
    ids = set()
    for dashcard in layout.dashcards:
        for mapping in dashcard.parameter_mappings or []:
            if isinstance(mapping, dict):
                card = layout.cards.get(mapping.get("card_id", dashcard.card_id))
                field_id = params.target_field_id(card, mapping.get("target"))
                if field_id is not None:
                    ids.add(field_id)
    return ids


def grant(session: Session, dashboard: Dashboard, layout: Layout | None = None) -> SharedGrant:
    """The dashboard's cards (dashcards and series, and the cards its filters take values from) and the
    fields its filters are wired to (with their remappings)."""
    layout = layout or load_layout(session, dashboard.id)
    cards = set(layout.cards) | public.values_cards(dashboard.parameters or [])
    return SharedGrant("dashboard", dashboard.id, frozenset(cards),
                       public.with_remaps(session, _mapped_field_ids(layout)), tenant=current_tenant())


def public_json(session: Session, dashboard: Dashboard, hide=frozenset()) -> dict:
    layout = load_layout(session, dashboard.id)
    hide = set(hide)
    parameters = [p for p in dashboard.parameters or [] if isinstance(p, dict) and p.get("slug") not in hide]

    def card(card_id):
        found = layout.cards.get(card_id) if card_id is not None else None
        return public.card_json(session, found, hide) if found is not None else None

    dashcards = [{
        "id": d.id, "card": card(d.card_id), "card_id": d.card_id, "dashboard_id": d.dashboard_id,
        "series": [c for c in (card(i) for i in layout.series.get(d.id, [])) if c is not None],
        "col": d.col, "row": d.row, "size_x": d.size_x, "size_y": d.size_y, "dashboard_tab_id": d.dashboard_tab_id,
        "parameter_mappings": d.parameter_mappings or [], "visualization_settings": d.visualization_settings or {},
        "action": None,
    } for d in layout.dashcards]
    return {"id": dashboard.id, "name": dashboard.name, "description": dashboard.description,
            "parameters": parameters, "auto_apply_filters": dashboard.auto_apply_filters, "width": dashboard.width,
            "tabs": [tab_json(t) for t in layout.tabs],
            "param_fields": public.param_fields(session, _mapped_field_ids(layout)), "dashcards": dashcards}


def _parameters(dashboard: Dashboard, dashcard, card_id: int, query: SharedQuery) -> list[dict]:
    given = public.matched_parameters(dashboard.parameters or [], query.parameters)
    return resolve_parameters(dashboard, dashcard, card_id, [{"id": p["id"], "value": p["value"]} for p in given])


def _constraints(query: SharedQuery) -> dict:
    if query.max_rows is None:
        return {}
    # download_cap: a download ignores the constraints, so the cap (embedding preview) is given to it too
    return {"constraints": {"max-results": query.max_rows, "max-results-bare-rows": query.max_rows},
            "download_cap": query.max_rows}


def run(session: Session, dashboard: Dashboard, query: SharedQuery) -> tuple[bytes, int]:
    dashcard, card = card_on(session, dashboard, query.dashcard_id or 0, query.card_id or 0)
    parameters = _parameters(dashboard, dashcard, card.id, query)
    viewer = grant(session, dashboard)
    if query.pivot:
        envelope, status = pivot_query.run_pivot(
            session, viewer, {**card.dataset_query, "parameters": parameters}, column_split=pivot_column_split(card),
            context=query.context or CONTEXT, card_id=card.id, dashboard_id=dashboard.id, **_constraints(query))
    else:
        envelope, status = processor.run_query(
            session, viewer, card.dataset_query, context=query.context or CONTEXT, card_id=card.id,
            dashboard_id=dashboard.id, parameters=parameters, ignore_cache=False, cache_ttl=card.cache_ttl,
            **_constraints(query))
    return public.result(envelope, status)


def export(session: Session, dashboard: Dashboard, query: SharedQuery, export_format: str):
    import orjson

    from core.http.api import json_response
    from core.http.auth import tessera

    dashcard, card = card_on(session, dashboard, query.dashcard_id or 0, query.card_id or 0)
    parameters = _parameters(dashboard, dashcard, card.id, query)
    viewer = grant(session, dashboard)
    if export_format == "api":
        envelope, status = processor.run_query(session, viewer, card.dataset_query, context=query.context or CONTEXT,
                                               card_id=card.id, dashboard_id=dashboard.id, export_format="api",
                                               parameters=parameters, **_constraints(query))
        body, status = public.result(envelope, status)
        return json_response(orjson.Fragment(body), status)
    options = {**query.options, "visualization_settings": dashcard.visualization_settings}
    if export_format in PICTURE_FORMATS and card.id == dashcard.card_id:
        options["series"] = _series(session, viewer, dashboard, dashcard, query)
    return card_download(session, viewer, tessera().exporters, export_format, card, options,
                         api_context=query.context or CONTEXT, dashboard_id=dashboard.id, parameters=parameters,
                         **_constraints(query))


def _series(session: Session, viewer: SharedGrant, dashboard: Dashboard, dashcard, query: SharedQuery) -> list:
    """The dashcard's series cards with their results under the page's filters (queries.series_results)."""
    return series_results(session, dashboard, dashcard, lambda card: processor.run_query(
        session, viewer, card.dataset_query, context=query.context or CONTEXT, card_id=card.id,
        dashboard_id=dashboard.id, parameters=_parameters(dashboard, dashcard, card.id, query),
        ignore_cache=False, cache_ttl=card.cache_ttl, **_constraints(query)))


def param_values(session: Session, dashboard: Dashboard, param_key: str, constraints: dict,
                 search: str | None) -> dict:
    given = {k: v if isinstance(v, list) else [v] for k, v in (constraints or {}).items()}
    return params.values_of(session, grant(session, dashboard), dashboard, param_key, given, search)


def param_remapping(session: Session, dashboard: Dashboard, param_key: str, value: str) -> list:
    return params.remapping_of(session, grant(session, dashboard), dashboard, param_key, value)


SHAREABLE = Shareable(
    "dashboard", Dashboard,
    public_json=public_json,
    run=run,
    export=export,
    field_values=lambda session, d, field_id: public.field_values(session, grant(session, d), field_id),
    field_search=lambda session, d, field_id, search_id, value, limit: public.field_search(
        session, grant(session, d), field_id, search_id, value, limit),
    field_remapping=lambda session, d, field_id, remapped_id, value: public.field_remapping(
        session, grant(session, d), field_id, remapped_id, value),
    param_values=param_values,
    param_remapping=param_remapping,
)
