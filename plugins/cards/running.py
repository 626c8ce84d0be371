"""Running a saved card: results (202), downloads and pivot tables, through core.query.processor.
A pivot card ("display": "pivot") downloaded with pivot_results is written pivoted (core.export.pivot).

Reading the card needs its collection readable; running needs data access to its database; a
download needs download permission ("limited" caps it at 10,000 rows).
"""
from __future__ import annotations

import orjson
from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Card, User
from core.content.cards import pivot_column_split
from core.export.response import card_download
from core.http.api import json_response
from core.http.errors import Forbidden
from core.policy import audience
from core.policy import permissions as perms
from core.query import pivot as pivot_query
from core.query import processor

from .service import get_card, readable_card


def runnable_card(session: Session, user: User, card_id: int) -> Card:
    card = readable_card(session, user, card_id)
    if card.database_id is None or not perms.can_see_data(session, user, card.database_id, card.table_id):
        raise Forbidden()
    return card


def card_parameters(card: Card, given: list[dict] | None) -> list[dict]:
    """The request's parameters, plus the card's own parameters that carry a default and were not given."""
    given = [p for p in (given or []) if isinstance(p, dict)]
    ids = {p.get("id") for p in given}
    defaults = [{"id": p.get("id"), "type": p.get("type"), "target": p.get("target"), "value": p["default"]}
                for p in card.parameters or []
                if isinstance(p, dict) and p.get("default") is not None and p.get("target") is not None
                and p.get("id") not in ids]
    return given + defaults


def run(session: Session, user: User, card_id: int, parameters: list | None, ignore_cache: bool):
    query, resolved, cache_ttl = run_inputs(session, user, card_id, parameters)
    body, status = processor.run_json(
        session, user, query, context="question", card_id=card_id, parameters=resolved,
        ignore_cache=ignore_cache, cache_ttl=cache_ttl)
    return json_response(orjson.Fragment(body), status)


def run_inputs(session: Session, user: User, card_id: int, parameters: list | None) -> tuple[dict, list, int | None]:
    """(query, parameters, cache_ttl) of a run of the card by this user with these parameters, after
    the card's read and data checks (403/404 raised, never kept). What the card gives a run is kept as
    JSON text while the card is unchanged (core.appdb.memo), keyed by the card and the parameters, not
    by the user: a repeated run loads no card, and each user's checks are asked of the permission
    answers (core.policy.permissions), which are kept too."""
    def compute():
        card = get_card(session, card_id)
        facts = (card.collection_id, card.database_id, card.table_id, card.cache_ttl)
        try:
            return orjson.dumps([card.dataset_query, card_parameters(card, parameters)]), facts
        except TypeError:  # integers beyond 64 bits: not kept
            return (card.dataset_query, card_parameters(card, parameters)), facts

    try:
        key = ("card run", card_id, orjson.dumps(parameters))
    except TypeError:
        key = None
    # `alone`, with the card's table declared: the answer is the card row's, whoever asks.
    stored, (collection_id, database_id, table_id, cache_ttl) = compute() if key is None else memo.get_or_compute(
        session, key, compute, keep=lambda value: isinstance(value[0], bytes), depends=(Card.__tablename__,),
        alone=True)
    # The read and data rights, kept per audience (core.policy.audience.kept_answers).
    allowed = audience.kept_answers(
        session, user, ("card run rights", collection_id, database_id, table_id),
        lambda: (perms.can_read_item(session, user, collection_id)
                 and database_id is not None and perms.can_see_data(session, user, database_id, table_id)),
        (collection_id,))
    if not allowed:
        raise Forbidden()
    query, resolved = orjson.loads(stored) if isinstance(stored, bytes) else stored
    return query, resolved, cache_ttl


def export(session: Session, user: User, exporters: dict, card_id: int, export_format: str,
           parameters: list | None, options: dict):
    card = runnable_card(session, user, card_id)
    return card_download(session, user, exporters, export_format, card, options, api_context="question",
                         parameters=card_parameters(card, parameters))


def pivot(session: Session, user: User, card_id: int, parameters: list | None):
    card = runnable_card(session, user, card_id)
    query = {**card.dataset_query, "parameters": card_parameters(card, parameters)}
    envelope, status = pivot_query.run_pivot(session, user, query, column_split=pivot_column_split(card),
                                             context="question", card_id=card.id)
    return json_response(envelope, status)
