"""First-run setup: the setup token, POST /api/setup, and the has-user-setup flag."""
from core import SettingDef, hookimpl

from . import service
from .views import setup_api


@hookimpl
def register_routes():
    return [setup_api]


@hookimpl
def register_settings():
    return [
        SettingDef("setup-token", visibility="public", getter=service.setup_token, env=False,
                   description="Token that authorises creating the first user; null once one exists."),
        SettingDef("has-user-setup", type="boolean", visibility="public", getter=service.has_user_setup,
                   env=False, description="Whether the first user has been created."),
    ]


@hookimpl
def startup(app):
    with app.extensions["tessera"].db.session() as session:
        service.ensure_setup_token(session)
