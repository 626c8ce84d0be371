"""/api/database: registering databases, their sync and the data-model settings. Essential."""
from core import SettingDef, hookimpl

from . import service
from .views import database_api


@hookimpl
def register_routes():
    return [database_api]


@hookimpl
def register_settings():
    return [
        SettingDef("humanization-strategy", default="simple", type="keyword", visibility="authenticated",
                   validate=service.valid_strategy,
                   description="How table and field names become display names: simple or none."),
    ]


@hookimpl
def startup(app):
    if app.config.get("TESSERA_LOAD_SAMPLE_DATABASE"):
        service.add_sample_on_first_start(app)


@hookimpl
def register_job_kinds():
    from .jobs import KINDS

    return KINDS
