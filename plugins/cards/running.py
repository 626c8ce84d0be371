"""Running a saved card: results (202), downloads and pivot tables, through core.query.processor.
A pivot card ("display": "pivot") downloaded with pivot_results is written pivoted (core.export.pivot).

Reading the card needs its collection readable; running needs data access to its database; a
download needs download permission ("limited" caps it at 10,000 rows).
"""
from __future__ import annotations

import orjson
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.content.cards import pivot_column_split
from core.export.response import card_download
from core.http.api import json_response
from core.http.errors import Forbidden
from core.policy import permissions as perms
from core.query import pivot as pivot_query
from core.query import processor

from .service import readable_card


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
    card = runnable_card(session, user, card_id)
    body, status = processor.run_json(
        session, user, card.dataset_query, context="question", card_id=card.id,
        parameters=card_parameters(card, parameters), ignore_cache=ignore_cache, cache_ttl=card.cache_ttl)
    return json_response(orjson.Fragment(body), status)


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
