"""A card's result_metadata: computed on save by running the query (so native columns come in SELECT
order), with what a client edited on a model's columns (names, descriptions, semantic types) kept.
Also the structural checks a query must pass before it is saved."""
from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.content.cards import is_native
from core.http.errors import ApiError, Invalid

log = logging.getLogger("tessera.cards")

# Column keys a client may edit on a model's metadata; the rest is recomputed from the query.
EDITABLE_KEYS = ("display_name", "description", "semantic_type", "fk_target_field_id", "settings",
                 "visibility_type", "id", "field_ref")


def check_structure(dataset_query: dict) -> None:
    """Reject what is not a query at all (400), before any permission or database work."""
    from core.query import mbql

    mbql.normalize(dataset_query)


def valid_metric(dataset_query: dict) -> bool:
    """A metric is an MBQL query whose last stage has exactly one aggregation and at most one breakout."""
    if is_native(dataset_query):
        return False
    from core.query import mbql

    try:
        stage = mbql.normalize(dataset_query).last
    except ApiError:
        return False
    return len(stage.aggregations) == 1 and len(stage.breakouts) <= 1


def compute(session: Session, user: User, dataset_query: dict) -> list[dict] | None:
    """The result columns of the query, in result order, or None when it cannot run right now."""
    from core.query import processor as card_queries

    try:
        return card_queries.result_metadata(session, user, dataset_query)
    except ApiError as error:
        log.info("result metadata not computed: %s", error.message)
        return None


def merge(computed: list[dict] | None, given: list[dict] | None) -> list[dict] | None:
    """The computed columns, with the client's edits of the same columns (matched by name) kept."""
    if computed is None:
        return given
    if not given:
        return computed
    by_name = {c.get("name"): c for c in given if isinstance(c, dict)}
    merged = []
    for column in computed:
        edited = by_name.get(column.get("name"))
        if edited is None:
            merged.append(column)
            continue
        merged.append({**column, **{k: edited[k] for k in EDITABLE_KEYS if k in edited and edited[k] is not None}})
    return merged


def for_save(session: Session, user: User, dataset_query: dict, given: list[dict] | None) -> list[dict] | None:
    if given is not None and not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in given):
        raise Invalid({"result_metadata": "value must be an array of valid results column metadata maps."})
    return merge(compute(session, user, dataset_query), given)
