"""The shareable kinds plugins contribute (register_shareables: cards, dashboards, actions), as the
sharing plugin reads them at request time.

They are collected once by create_app (core.assembly.plugins.shareables, which refuses a duplicate
model) and kept on the app state. A disabled owner's kind is absent: its public and embed URLs are 404.
Outside an app there are none.
"""
from __future__ import annotations

from core.assembly.records import Shareable
from core.http.errors import NotFound


def shareables() -> dict[str, Shareable]:
    try:
        from flask import current_app

        return current_app.extensions["tessera"].shareables
    except (RuntimeError, KeyError):
        return {}


def shareable(model: str) -> Shareable | None:
    return shareables().get(model)


def require(model: str, slot: str | None = None) -> Shareable:
    """The kind `model` (and its callable `slot`, when named), else 404: nothing of it is served."""
    found = shareable(model)
    if found is None or (slot is not None and getattr(found, slot) is None):
        raise NotFound()
    return found
