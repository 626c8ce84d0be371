"""/api/card: saved questions, models and metrics; running and exporting them; model persistence and
CSV uploads."""
from core import Revisable, SettingDef, hookimpl

from . import history
from .views import card_api, card_table_api, database_cards_api, saved_questions_api


@hookimpl
def register_routes():
    return [card_api, card_table_api, saved_questions_api, database_cards_api]


@hookimpl
def register_settings():
    return [
        SettingDef("uploads-settings", type="json", visibility="authenticated",
                   description="Where CSV uploads go: {db_id, schema_name, table_prefix}; unset means "
                               "Tessera's own uploads SQLite file."),
    ]


@hookimpl
def register_revisables():
    return [Revisable("card", history.history, history.revert)]


@hookimpl
def register_shareables():
    from .shared import SHAREABLE

    return [SHAREABLE]
