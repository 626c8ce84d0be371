"""Public links and signed embedding: the settings that switch them on and hold the embedding key, and
/api/public (public_views.py), which serves every kind that registers a core.assembly.records.Shareable.

The guards every sharing endpoint calls live in core.policy.sharing, so cards and dashboards check them
without importing this plugin.
"""
from core import SettingDef, hookimpl

from . import embed_views, pages, preview_views, public_actions, service, toggles  # noqa: F401  (routes)
from .public_views import public_api


@hookimpl
def register_settings():
    return [
        SettingDef("enable-public-sharing", type="boolean", default=True, visibility="authenticated",
                   description="Allow sharing questions and dashboards by public link."),
        *toggles.settings(),
        SettingDef("embedding-secret-key", visibility="admin", sensitive=True, validate=service.valid_secret_key,
                   description="Secret (64 hexadecimal characters) that signs embedding tokens."),
        *pages.settings(),
    ]


@hookimpl
def register_routes():
    return [public_api, embed_views.embed_api, preview_views.preview_api]


@hookimpl
def register_pages():
    return pages.pages()


@hookimpl
def startup(app):
    state = app.extensions["tessera"]
    with state.db.session() as session:
        if toggles.sync_from_environment(session, state.settings):
            session.commit()
