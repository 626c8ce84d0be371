"""The content kinds plugins contribute (register_content_kinds; dashboards), as the plugins that list
content read them: collection items and the tree, the archive cascade, search, bookmarks and cards.

The kinds are collected once by create_app (core.assembly.plugins.content_kinds, which refuses
duplicates) and kept on the app state; here they are read at request time. A disabled plugin's kind is
absent, so every reader simply shows nothing of it. Outside an app there are none.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.assembly.records import ContentKind, ItemRef


def kinds() -> dict[str, ContentKind]:
    try:
        from flask import current_app

        return current_app.extensions["tessera"].content_kinds
    except (RuntimeError, KeyError):
        return {}


def kind(model: str) -> ContentKind | None:
    return kinds().get(model)


def item_sources() -> list:
    """The contributed core.content.items.ItemSource objects, in plugin order."""
    return [k.items for k in kinds().values() if k.items is not None]


def search_sources() -> dict[str, object]:
    """model -> `(SearchContext) -> list[dict]` of every contributed searchable kind."""
    return {model: k.search for model, k in kinds().items() if k.search is not None}


def bookmark_tables() -> dict[str, tuple]:
    """model -> (ORM model, item-id column) of every contributed bookmarkable kind."""
    return {model: k.bookmark for model, k in kinds().items() if k.bookmark is not None}


def lookup(session: Session, model: str, ids) -> dict[int, ItemRef]:
    """The existing items of `model` among `ids` (none when the kind is absent or says nothing)."""
    found = kind(model)
    ids = list(ids)
    if found is None or found.lookup is None or not ids:
        return {}
    return found.lookup(session, ids)


def card_counts(session: Session, model: str, card_ids) -> dict[int, int]:
    """How many times items of `model` place each card (0s left out)."""
    found = kind(model)
    card_ids = list(card_ids)
    if found is None or found.card_counts is None or not card_ids:
        return {}
    return found.card_counts(session, card_ids)


def card_holders(session: Session, model: str, card_id: int) -> list[int]:
    found = kind(model)
    if found is None or found.card_holders is None:
        return []
    return list(found.card_holders(session, card_id))
