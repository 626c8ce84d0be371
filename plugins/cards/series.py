"""Cards that can be drawn together with a card as series (GET /api/card/:id/series): line, area
and bar cards need a dimension and a numeric metric whose primary dimension agrees (temporal or
numeric) with the card's; scalars need single-column results; native cards always qualify."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, User
from core.http.errors import Invalid

from .service import readable, readable_card

PAGE_SIZE = 50
COMPATIBLE = {"line": ("line", "area", "bar"), "area": ("line", "area", "bar"), "bar": ("line", "area", "bar"),
              "scalar": ("scalar",)}
NUMERIC = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number", "type/Currency")
TEMPORAL = ("type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ", "type/Time",
            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/TimeWithTZ")


def _kind(column: dict) -> str | None:
    base = column.get("effective_type") or column.get("base_type")
    if base in TEMPORAL or column.get("unit"):
        return "temporal"
    if base in NUMERIC:
        return "numeric"
    return None


def _is_aggregation(column: dict) -> bool:
    ref = column.get("field_ref")
    return column.get("source") == "aggregation" or (isinstance(ref, list) and ref[:1] == ["aggregation"])


def _dimensions(card: Card) -> list[dict]:
    """The breakout columns: what an aggregated result has besides its aggregations."""
    columns = [c for c in card.result_metadata or [] if isinstance(c, dict)]
    if not any(_is_aggregation(c) for c in columns):
        return []
    return [c for c in columns if not _is_aggregation(c)]


def _metrics(card: Card) -> list[dict]:
    return [c for c in card.result_metadata or [] if isinstance(c, dict) and _is_aggregation(c)
            and _kind(c) == "numeric"]


def _compatible(card: Card, other: Card) -> bool:
    if other.query_type == "native":
        return True
    if card.display == "scalar":
        return len(other.result_metadata or []) == 1
    dims, metrics = _dimensions(other), _metrics(other)
    if not dims or not metrics:
        return False
    mine = _dimensions(card)
    return not mine or _kind(mine[0]) == _kind(dims[0])


def series(session: Session, user: User, card_id: int, last_cursor: int | None, text: str | None,
           exclude_ids: list[int] | None) -> list[Card]:
    card = readable_card(session, user, card_id)
    if card.display not in COMPATIBLE:
        raise Invalid(f"Card with type {card.display} is not compatible to have series")
    query = select(Card).where(Card.archived.is_(False), Card.id != card.id,
                               Card.display.in_(COMPATIBLE[card.display])).order_by(Card.id.desc())
    if last_cursor is not None:
        query = query.where(Card.id < last_cursor)
    if exclude_ids:
        query = query.where(Card.id.not_in(exclude_ids))
    needle = text.lower() if text else None
    found: list[Card] = []
    for batch in session.scalars(query).partitions(200):
        candidates = [c for c in batch if (needle is None or needle in c.name.lower()) and _compatible(card, c)]
        found.extend(readable(session, user, candidates))
        if len(found) >= PAGE_SIZE:
            break
    return found[:PAGE_SIZE]
