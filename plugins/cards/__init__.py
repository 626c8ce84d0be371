"""/api/card: saved questions, models and metrics; running and exporting them; model persistence and
CSV uploads."""
from core import Revisable, SettingDef, hookimpl

from . import history, refresh
from .views import card_api, card_table_api, database_cards_api, field_ref_api, saved_questions_api


@hookimpl
def register_routes():
    return [card_api, card_table_api, saved_questions_api, database_cards_api, field_ref_api]


@hookimpl
def register_settings():
    return [
        SettingDef("uploads-settings", type="json", visibility="authenticated",
                   description="Where CSV uploads go: {db_id, schema_name, table_prefix}; unset means "
                               "Tessera's own uploads SQLite file."),
        SettingDef(refresh.SETTING, default=refresh.DEFAULT_CRON, visibility="admin", validate=refresh.valid_cron,
                   description="When persisted models are refreshed: a Quartz cron (seconds first)."),
    ]


@hookimpl
def register_revisables():
    return [Revisable("card", history.history, history.revert)]


@hookimpl
def register_shareables():
    from .shared import SHAREABLE

    return [SHAREABLE]


@hookimpl
def register_job_kinds():
    return refresh.KINDS
