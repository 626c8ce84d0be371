"""Logging in and out, /api/session/properties and /api/health.

Owns the settings that describe the server itself to clients: version, engines, password
complexity, locales.
"""
from core import SettingDef, hookimpl

from . import service
from .views import health_api, session_api


@hookimpl
def register_routes():
    return [session_api, health_api]


@hookimpl
def register_settings():
    return [
        SettingDef("version", type="json", visibility="public", getter=service.version,
                   description="Metabase API level and Tessera version.", env=False),
        SettingDef("engines", type="json", visibility="public", getter=service.engines,
                   description="Database engines and their connection properties.", env=False),
        SettingDef("password-complexity", type="json", visibility="public", getter=service.password_complexity,
                   description="Minimum character counts a password must have.", env=False),
        SettingDef("available-locales", type="json", visibility="public", getter=service.available_locales,
                   description="Locales the server offers.", env=False),
        SettingDef("token-features", type="json", visibility="public", getter=service.token_features,
                   description="Paid features: none in Tessera.", env=False),
        SettingDef("session-cookies", type="boolean", visibility="public", default=None,
                   description="Session cookies expire when the browser closes."),
        SettingDef("session-cookie-samesite", type="keyword", visibility="admin", default="lax",
                   validate=service.valid_samesite, description="SameSite attribute of the session cookie."),
    ]
