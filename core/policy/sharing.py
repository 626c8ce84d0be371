"""Guards for public links and embedding, called by every plugin that shares something.

The settings are declared by plugins.sharing; when that plugin is disabled, sharing is off. This stays
in core although only plugins.cards calls it today: it is where two plugins meet (plugins.sharing owns
the settings, the sharing plugins read them, and plugins never import each other), and dashboards'
public links and embeds will need the same guards.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.http.errors import Invalid


def _settings():
    from flask import current_app

    return current_app.extensions["tessera"].settings


def public_sharing_enabled(session: Session) -> bool:
    return bool(_settings().get_or(session, "enable-public-sharing", False))


def check_public_sharing(session: Session) -> None:
    if not public_sharing_enabled(session):
        raise Invalid("Public sharing is not enabled.")


def static_embedding_enabled(session: Session) -> bool:
    settings = _settings()
    return bool(settings.get_or(session, "enable-embedding-static", False)
                or settings.get_or(session, "enable-embedding", False))


def check_embedding(session: Session) -> None:
    if not static_embedding_enabled(session):
        raise Invalid("Embedding is not enabled.")


def embedding_secret(session: Session) -> str:
    secret = _settings().get_or(session, "embedding-secret-key")
    if not secret:
        raise Invalid("The embedding secret key has not been set.")
    return secret
