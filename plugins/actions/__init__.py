"""/api/action: query, HTTP and implicit actions on models, their execution (directly, from a dashcard's
button through the action_runner hook, from a public link through the "action" Shareable) and their
public links. Actions run only on databases whose `database-enable-actions` setting is on."""
from pathlib import Path

from core import Migrations, hookimpl

from . import models  # noqa: F401  (the plugin's tables join core.appdb.models.Base when it loads)
from .runner import RUNNER, SHAREABLE
from .views import action_api


@hookimpl
def register_migrations():
    return [Migrations("actions", Path(__file__).parent / "migrations")]


@hookimpl
def register_routes():
    return [action_api]


@hookimpl
def register_shareables():
    return [SHAREABLE]


@hookimpl
def action_runner():
    return RUNNER
