"""Row and column security (Metabase's data sandboxes, GTAPs): /api/mt/gtap, /api/mt/user attributes,
the `sandboxes` key of the permissions graph, and the `restrict_tables` answers the core applies in its
one data-access gate (core.query.restrictions). Disabled, the graph answers 402 to sandboxes again."""
from pathlib import Path

from core import Migrations, SettingDef, hookimpl

from . import (
    models,  # noqa: F401  (the plugin's table joins core.appdb.models.Base when it loads)
    service,
)
from .views import attributes_api, gtap_api


@hookimpl
def register_migrations():
    return [Migrations("sandboxes", Path(__file__).parent / "migrations")]


@hookimpl
def register_settings():
    return [SettingDef(service.EMBEDDING_GROUP_SETTING, type="integer", visibility="admin",
                       validate=service.valid_group_id,
                       description="The group whose sandboxes restrict signed embeds, filled with the user "
                                   "attributes of the token's `attributes` claim.")]


@hookimpl
def register_routes():
    return [gtap_api, attributes_api]


@hookimpl
def restrict_tables(session, viewer, database_id):
    return service.restrictions(session, viewer, database_id)


@hookimpl
def apply_sandboxes(session, user, changes):
    if changes is not None:
        service.apply_changes(session, changes)
        service.drop_lifted(session)
    return True
