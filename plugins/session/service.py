"""Session plugin logic: the computed settings it owns."""
from __future__ import annotations

from flask import current_app

from core.http.errors import Invalid
from core.identity.passwords import complexity

LOCALES = [["en", "English"], ["de", "German"], ["es", "Spanish"], ["fr", "French"], ["it", "Italian"],
           ["ja", "Japanese"], ["nl", "Dutch"], ["pt_BR", "Portuguese (Brazil)"], ["zh", "Chinese"]]


def _state():
    return current_app.extensions["tessera"]


def version(session):
    return _state().version


def engines(session):
    return {engine: driver.engine_info() for engine, driver in sorted(_state().drivers.items())}


def password_complexity(session):
    config = _state().config
    return complexity(config["TESSERA_PASSWORD_COMPLEXITY"], config["TESSERA_PASSWORD_LENGTH"])


def available_locales(session):
    return LOCALES


def token_features(session):
    # Group managers are the one "paid" feature Tessera has, behind the advanced-permissions setting
    # (plugins.permissions); clients read this flag to show the group-manager controls.
    settings = _state().settings
    advanced = "advanced-permissions" in settings.definitions and bool(settings.get(session, "advanced-permissions"))
    # Sandboxes exist while a plugin stores them (plugins.sandboxes implements apply_sandboxes).
    sandboxes = bool(_state().pm.hook.apply_sandboxes.get_hookimpls())
    return {"sandboxes": sandboxes, "advanced_permissions": advanced, "embedding": False, "audit_app": False,
            "sso_jwt": False, "sso_saml": False, "whitelabel": False, "official_collections": False}


def valid_samesite(value):
    if str(value).lower() not in ("lax", "strict", "none"):
        raise Invalid({"value": "Invalid value for session-cookie-samesite: use lax, strict or none."})
    return str(value).lower()
