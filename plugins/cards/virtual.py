"""Cards seen as tables: `card__N` virtual tables (their fields are the card's result columns) and
the "Saved Questions" virtual database (id -1337) whose schemas are the cards' collections."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Database, User
from core.http.errors import NotFound
from core.policy import permissions as perms

from .service import readable, readable_card

VIRTUAL_DB_ID = -1337
ROOT_SCHEMA = "Everything else"
AUTOCOMPLETE_LIMIT = 50


def _database_json(database: Database) -> dict:
    from core.driver.connections import driver_for

    try:
        features = sorted(driver_for(database).features)
    except Exception:  # a database whose driver is disabled still shows; it just offers nothing
        features = []
    return {"id": database.id, "name": database.name, "engine": database.engine, "description": database.description,
            "features": features, "is_sample": database.is_sample, "is_audit": database.is_audit,
            "timezone": database.timezone, "settings": database.settings, "native_permissions": None,
            "initial_sync_status": database.initial_sync_status}


def _schema_of(session: Session, card: Card) -> str:
    if card.collection_id is None:
        return ROOT_SCHEMA
    collection = session.get(Collection, card.collection_id)
    return collection.name if collection is not None else ROOT_SCHEMA


def field_json(card: Card, column: dict) -> dict:
    base = column.get("base_type") or "type/*"
    ref = ["field", column.get("name"), {"base-type": base}]
    return {**column, "table_id": f"card__{card.id}",
            "id": column["id"] if isinstance(column.get("id"), int) else ref,
            "field_ref": column.get("field_ref") or ref, "base_type": base,
            "effective_type": column.get("effective_type") or base,
            "display_name": column.get("display_name") or column.get("name"),
            "semantic_type": column.get("semantic_type"), "has_field_values": "none",
            "visibility_type": column.get("visibility_type") or "normal", "fingerprint": column.get("fingerprint"),
            "source": "fields"}


def table_json(session: Session, card: Card, *, with_fields: bool = True) -> dict:
    out = {"id": f"card__{card.id}", "db_id": card.database_id, "display_name": card.name, "name": card.name,
           "schema": _schema_of(session, card), "moderated_status": None, "description": card.description,
           "type": card.type, "entity_type": None, "active": True, "visibility_type": None,
           "card_id": card.id}
    if with_fields:
        out["fields"] = [field_json(card, c) for c in card.result_metadata or [] if isinstance(c, dict)]
    return out


def query_metadata(session: Session, user: User, card_id: int) -> dict:
    card = readable_card(session, user, card_id)
    out = table_json(session, card)
    database = session.get(Database, card.database_id) if card.database_id is not None else None
    out.update({"db": _database_json(database) if database is not None else None, "segments": [],
                "metrics": [], "fks": []})
    return out


def fks(session: Session, user: User, card_id: int) -> list:
    readable_card(session, user, card_id)
    return []


# --------------------------------------------------------------------------------------------------
# The Saved Questions database
# --------------------------------------------------------------------------------------------------


def field_ref_values() -> dict:
    """GET /api/field/field,<name>,<options>/values: the empty values answer whatever the reference
    names, as Metabase gives it. A column of a saved question has no field row, so no values are
    ever scanned or stored for it; the answer says nothing about any data, so nothing is checked
    beyond the signed-in caller."""
    return {"values": []}


def _source_cards(session: Session, user: User, kind: str | None) -> list[Card]:
    """Cards usable as sources: not archived, with known columns, on a database that nests queries."""
    query = select(Card).where(Card.archived.is_(False), Card.database_id.is_not(None)
                               ).order_by(func.lower(Card.name), Card.id)
    if kind == "model":
        query = query.where(Card.type == "model")
    elif kind == "question":
        query = query.where(Card.type == "question")
    # Filtered here, not in SQL: a JSON column may hold JSON null rather than SQL NULL.
    cards = readable(session, user, [c for c in session.scalars(query) if c.result_metadata])
    return [c for c in cards if perms.can_see_data(session, user, c.database_id, c.table_id)]


def schemas(session: Session, user: User, kind: str) -> list[str]:
    return sorted({_schema_of(session, c) for c in _source_cards(session, user, kind)}, key=str.lower)


def schema_tables(session: Session, user: User, kind: str, schema: str) -> list[dict]:
    tables = [table_json(session, c, with_fields=False) for c in _source_cards(session, user, kind)
              if _schema_of(session, c) == schema]
    if not tables:
        raise NotFound()
    return tables


def metadata(session: Session, user: User) -> dict:
    return {"id": VIRTUAL_DB_ID, "name": "Saved Questions", "is_saved_questions": True,
            "features": ["basic-aggregations"],
            "tables": [table_json(session, c) for c in _source_cards(session, user, None)]}


def autocomplete(session: Session, user: User, database_id: int, text: str) -> list[dict]:
    """Cards of the database for the `{{#...}}` tag: by id prefix or name substring, readable ones."""
    check = session.get(Database, database_id)
    if check is None:
        raise NotFound()
    query = select(Card).where(Card.database_id == database_id, Card.archived.is_(False))
    needle = text.strip().lower()
    digits = needle.split("-", 1)[0]
    cards = [c for c in session.scalars(query.order_by(Card.id.desc()))
             if needle in c.name.lower() or (digits.isdigit() and str(c.id).startswith(digits))]
    out = []
    for card in readable(session, user, cards)[:AUTOCOMPLETE_LIMIT]:
        collection = session.get(Collection, card.collection_id) if card.collection_id else None
        out.append({"id": card.id, "name": card.name, "type": card.type, "dataset": card.type == "model",
                    "collection_name": collection.name if collection is not None else None})
    return out
