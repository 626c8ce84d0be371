"""A card as a shared object (core.assembly.records.Shareable "card"): what plugins.sharing serves of it
for a public link or an embed. The viewer has no account: every run goes through core.query.processor
with the card's core.query.access.SharedGrant, which reads exactly what the card holds."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core import Shareable, SharedQuery
from core.appdb.models import Card
from core.content import public
from core.content.cards import pivot_column_split
from core.export.response import card_download
from core.http.errors import NotFound, check_404
from core.query import pivot as pivot_query
from core.query import processor

from . import params
from .running import card_parameters

# The query log's context of a public run (an embed passes its own in SharedQuery.context).
CONTEXT = "public-question"


def _parameters(card: Card, query: SharedQuery) -> list[dict]:
    return card_parameters(card, public.matched_parameters(public.card_parameters(card), query.parameters))


def _constraints(query: SharedQuery) -> dict:
    if query.max_rows is None:
        return {}
    # download_cap: a download ignores the constraints, so the cap (embedding preview) is given to it too
    return {"constraints": {"max-results": query.max_rows, "max-results-bare-rows": query.max_rows},
            "download_cap": query.max_rows}


def run(session: Session, card: Card, query: SharedQuery) -> tuple[bytes, int]:
    grant = public.card_grant(session, card)
    if query.pivot:
        dataset_query = {**card.dataset_query, "parameters": _parameters(card, query)}
        envelope, status = pivot_query.run_pivot(
            session, grant, dataset_query, column_split=pivot_column_split(card), context=query.context or CONTEXT,
            card_id=card.id, **_constraints(query))
    else:
        envelope, status = processor.run_query(
            session, grant, card.dataset_query, context=query.context or CONTEXT, card_id=card.id,
            parameters=_parameters(card, query), ignore_cache=False, cache_ttl=card.cache_ttl, **_constraints(query))
    return public.result(envelope, status)


def export(session: Session, card: Card, query: SharedQuery, export_format: str):
    from core.http.auth import tessera

    if export_format == "api":
        import orjson

        from core.http.api import json_response

        grant = public.card_grant(session, card)
        envelope, status = processor.run_query(session, grant, card.dataset_query, context=query.context or CONTEXT,
                                               card_id=card.id, export_format="api",
                                               parameters=_parameters(card, query), **_constraints(query))
        body, status = public.result(envelope, status)
        return json_response(orjson.Fragment(body), status)
    return card_download(session, public.card_grant(session, card), tessera().exporters, export_format, card,
                         dict(query.options), api_context=query.context or CONTEXT, parameters=_parameters(card, query),
                         **_constraints(query))


def param_values(session: Session, card: Card, param_key: str, constraints: dict, search: str | None) -> dict:
    grant = public.card_grant(session, card)

    def source_card(card_id: int) -> Card:
        if card_id not in grant.card_ids:
            raise NotFound()
        return check_404(session.get(Card, card_id))

    return params.values_of(session, grant, card, public.card_parameters(card), param_key, search, source_card)


SHAREABLE = Shareable(
    "card", Card,
    public_json=lambda session, card, hide=frozenset(): public.card_json(session, card, hide),
    run=run,
    export=export,
    field_values=lambda session, card, field_id: public.field_values(session, public.card_grant(session, card),
                                                                     field_id),
    field_search=lambda session, card, field_id, search_id, value, limit: public.field_search(
        session, public.card_grant(session, card), field_id, search_id, value, limit),
    field_remapping=lambda session, card, field_id, remapped_id, value: public.field_remapping(
        session, public.card_grant(session, card), field_id, remapped_id, value),
    param_values=param_values,
)
