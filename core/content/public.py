"""What a shared object (public link, signed embed) shows a viewer without an account, written once for
the plugins that own shareable kinds (cards, dashboards: core.assembly.records.Shareable): a card's
public JSON (exactly compat content.md 5's keys: no SQL, no database details, no creator), the public
result shape, the fields a card uses and its grant (core.query.access.SharedGrant), and field values,
search and remapping restricted to the grant's fields (any other field is 404).
"""
from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Dimension, Field, Table
from core.content import field_lookups as lookups
from core.content.metadata import dimension_json, field_json
from core.http.errors import ApiError, NotFound
from core.policy.principal import current_tenant
from core.query import access
from core.query import parameters as P
from core.query import restricted_values as restricted
from core.query.access import SharedGrant

PUBLIC_ERROR = "An error occurred while running the query."
DATA_KEYS = ("cols", "rows", "rows_truncated", "insights", "requested_timezone", "results_timezone")
RAW_TAG_TYPES = ("text", "number", "date", "boolean", "temporal-unit")
TAG_WIDGETS = {"date": "date/single", "text": "string/=", "number": "number/="}


# --------------------------------------------------------------------------------------------------
# A card's public JSON
# --------------------------------------------------------------------------------------------------


def template_tags(card: Card) -> dict:
    query = card.dataset_query if isinstance(card.dataset_query, dict) else {}
    native = query.get("native")
    if not isinstance(native, dict):
        stages = query.get("stages")
        native = stages[0] if isinstance(stages, list) and stages and isinstance(stages[0], dict) else {}
    tags = native.get("template-tags") if isinstance(native, dict) else None
    return tags if isinstance(tags, dict) else {}


def card_parameters(card: Card) -> list[dict]:
    """The card's parameters, then a parameter for each template tag a widget fills that none of them
    covers (Metabase's template-tag parameters, which the public card's filters are drawn from)."""
    own = [p for p in card.parameters or [] if isinstance(p, dict)]
    seen = {p.get("id") for p in own}
    for name, tag in template_tags(card).items():
        if not isinstance(tag, dict) or tag.get("id") in seen:
            continue
        kind, widget = tag.get("type"), tag.get("widget-type")
        if kind not in RAW_TAG_TYPES and not (kind == "dimension" and widget and widget != "none"):
            continue
        target = ["dimension" if kind == "dimension" else "variable", ["template-tag", tag.get("name") or name]]
        own.append({"id": tag.get("id"), "type": widget or TAG_WIDGETS.get(kind, "category"), "target": target,
                    "name": tag.get("display-name"), "slug": tag.get("name") or name, "default": tag.get("default"),
                    "required": bool(tag.get("required"))})
    return own


def card_json(session: Session, card: Card, hide: Iterable[str] = ()) -> dict:
    """{id, name, description, display, visualization_settings, parameters, dataset_query: {type,
    native: {template-tags}}, param_fields}; parameters whose slug is in `hide` left out."""
    hide = set(hide)
    query = card.dataset_query if isinstance(card.dataset_query, dict) else {}
    kind = "native" if template_tags(card) or query.get("type") == "native" or "native" in query else "query"
    shown_query: dict[str, Any] = {"type": kind}
    if kind == "native":
        shown_query["native"] = {"template-tags": {k: v for k, v in template_tags(card).items()
                                                  if not (isinstance(v, dict) and v.get("name", k) in hide)}}
    parameters = [p for p in card_parameters(card) if p.get("slug") not in hide]
    return {"id": card.id, "name": card.name, "description": card.description, "display": card.display,
            "visualization_settings": card.visualization_settings or {}, "parameters": parameters,
            "dataset_query": shown_query,
            "param_fields": param_fields(session, [parameter_field_id(card, p) for p in parameters])}


def parameter_field_id(card: Card | None, param: dict) -> int | None:
    """The field a card parameter (or a dashboard mapping target, given as {"target": ...}) filters."""
    target = param.get("target")
    tag = P.template_tag_target(target)
    if tag is not None:
        definition = template_tags(card).get(tag[1]) if card is not None and isinstance(tag[1], str) else None
        if not isinstance(definition, dict) or definition.get("type") != "dimension":
            return None
        target = ["dimension", definition.get("dimension")]
    ref = P.field_target(target)
    if ref and isinstance(ref[1], str) and card is not None:
        ref = ["field", next((c.get("id") for c in card.result_metadata or []
                              if isinstance(c, dict) and c.get("name") == ref[1]), None)]
    return ref[1] if ref and isinstance(ref[1], int) and not isinstance(ref[1], bool) else None


def param_fields(session: Session, field_ids: Iterable[int | None]) -> dict:
    """Field id (text) -> field JSON with its dimensions, for the fields the shown parameters filter."""
    ids = {i for i in field_ids if isinstance(i, int) and 0 < i < 2**31}
    if not ids:
        return {}
    fields = {f.id: f for f in session.scalars(select(Field).where(Field.id.in_(ids)))}
    dimensions: dict[int, list] = {}
    for dimension in session.scalars(select(Dimension).where(Dimension.field_id.in_(fields))):
        dimensions.setdefault(dimension.field_id, []).append(dimension_json(dimension))
    return {str(i): {**field_json(fields[i]), "dimensions": dimensions.get(i, []), "target": None}
            for i in sorted(fields)}


# --------------------------------------------------------------------------------------------------
# What a card reads: its grant
# --------------------------------------------------------------------------------------------------


def card_field_ids(session: Session, card: Card) -> set[int]:
    """The fields a card uses: those its query names, its field filters' and parameters' fields."""
    from core.query.mbql import normalize
    from core.query.model import referenced_ids

    ids: set[int] = set()
    try:
        ids |= referenced_ids(normalize(card.dataset_query).stages)[0]
    except (ApiError, TypeError, ValueError, KeyError, AttributeError, IndexError):
        pass
    ids |= {parameter_field_id(card, p) for p in card_parameters(card)} - {None}
    return ids


def with_remaps(session: Session, field_ids: set[int]) -> frozenset:
    """The fields and the display fields their FK remappings name (shown with their values)."""
    ids = {i for i in field_ids if isinstance(i, int) and 0 < i < 2**31}
    if not ids:
        return frozenset()
    shown = set(session.scalars(select(Dimension.human_readable_field_id).where(
        Dimension.field_id.in_(ids), Dimension.type == "external", Dimension.human_readable_field_id.is_not(None))))
    return frozenset(ids | shown)


def values_cards(parameters: Iterable[dict]) -> set[int]:
    """Cards that parameters take their values from (values_source_type "card")."""
    out = set()
    for param in parameters:
        config = param.get("values_source_config") if isinstance(param, dict) else None
        if param.get("values_source_type") == "card" and isinstance(config, dict) \
                and isinstance(config.get("card_id"), int):
            out.add(config["card_id"])
    return out


def card_grant(session: Session, card: Card) -> SharedGrant:
    return SharedGrant("card", card.id, frozenset({card.id} | values_cards(card_parameters(card))),
                       with_remaps(session, card_field_ids(session, card)), tenant=current_tenant())


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


def result(envelope: dict, status: int) -> tuple[bytes, int]:
    """A processor response (run_query's envelope and status) as a public one: data's columns and rows,
    json_query's parameters and the status; a failure says only that an error occurred (no SQL, no
    engine message)."""
    from core.http.api import dumps
    from core.query.results import FAILED_STATUS

    if status == FAILED_STATUS or envelope.get("status") == "failed":
        return dumps(failed(envelope.get("error_type"))), FAILED_STATUS
    return dumps(completed(envelope)), status


def completed(envelope: dict) -> dict:
    data = envelope.get("data") or {}
    return {"data": {k: data[k] for k in DATA_KEYS if k in data},
            "json_query": {"parameters": (envelope.get("json_query") or {}).get("parameters")},
            "status": "completed"}


def failed(error_type: str | None = None) -> dict:
    return {"status": "failed", "error": PUBLIC_ERROR, "error_type": error_type}


# --------------------------------------------------------------------------------------------------
# Field values, search and remapping of a shared object's fields
# --------------------------------------------------------------------------------------------------


def _granted(session: Session, grant: SharedGrant, field_id: int) -> tuple[Field, Table]:
    field = session.get(Field, field_id) if field_id in grant.field_ids else None
    if field is None:
        raise NotFound()
    access.field(session, grant, field)
    return field, session.get(Table, field.table_id)


def _other(session: Session, grant: SharedGrant, field: Field, other_id: int) -> Field:
    """A second field (searched, remapped): the field itself, or one the object uses."""
    if other_id == field.id:
        return field
    return _granted(session, grant, other_id)[0]


def _any_table(table: Table) -> None:
    """The second table is that of a field the grant holds (checked before), nothing more to ask."""


# An embedded tenant's grant may be restricted (core.query.restrictions): the stored values hold every
# row's, so a restricted table's are queried (core.query.restricted_values), as for a sandboxed user.

def field_values(session: Session, grant: SharedGrant, field_id: int) -> dict:
    field, table = _granted(session, grant, field_id)
    if restricted.covers(session, grant, table):
        return restricted.values(session, grant, field, table)
    return lookups.values(session, field, table, _any_table, lambda remap_id: remap_id in grant.field_ids)


def field_search(session: Session, grant: SharedGrant, field_id: int, search_field_id: int, value: str,
                 limit: int | None) -> list:
    field, table = _granted(session, grant, field_id)
    search_field = _other(session, grant, field, search_field_id)
    lookup_table, key = lookups.lookup(session, field, table, search_field, _any_table)
    if restricted.covers(session, grant, lookup_table):
        return restricted.search(session, grant, key, search_field, lookup_table, value,
                                 min(limit or lookups.SEARCH_LIMIT, lookups.SEARCH_LIMIT))
    return lookups.search(session, field, table, search_field, value, limit, _any_table)


def field_remapping(session: Session, grant: SharedGrant, field_id: int, remapped_id: int, value: str) -> list:
    field, table = _granted(session, grant, field_id)
    remapped = _other(session, grant, field, remapped_id)
    lookup_table, key = lookups.lookup(session, field, table, remapped, _any_table)
    if restricted.covers(session, grant, lookup_table):
        return restricted.remapping(session, grant, key, remapped, lookup_table, lookups.typed(key, value))
    return lookups.remapping(session, field, table, remapped, value, _any_table)


# --------------------------------------------------------------------------------------------------
# Parameters a viewer sends
# --------------------------------------------------------------------------------------------------


def matched_parameters(declared: Iterable[dict], given: Iterable[Any]) -> list[dict]:
    """The given values of the object's own parameters, matched by id or slug, each with the declared
    id, type, target and options: what a value filters is always the author's choice, never the
    request's. Values for parameters the object does not declare are dropped."""
    declared = [p for p in declared if isinstance(p, dict)]
    by_id = {p.get("id"): p for p in declared if p.get("id") is not None}
    by_slug = {p.get("slug"): p for p in declared if p.get("slug") is not None}
    out = []
    for param in given:
        if not isinstance(param, dict):
            continue
        own = by_id.get(param.get("id")) if isinstance(param.get("id"), str) else None
        if own is None and isinstance(param.get("slug"), str):
            own = by_slug.get(param.get("slug"))
        if own is None:
            continue
        matched = {"id": own.get("id"), "type": own.get("type") or param.get("type") or "category",
                   "value": param.get("value")}
        if own.get("target") is not None:
            matched["target"] = own["target"]
        if isinstance(own.get("options"), dict):
            matched["options"] = own["options"]
        out.append(matched)
    return out
