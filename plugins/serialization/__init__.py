"""Content as code (issue 35): collections, questions, dashboards, timelines, actions, snippets, the
data model and settings exported as YAML in Metabase's serialization layout, byte-stable for git, and
imported by entity_id in one transaction; `tessera export|import|diff` and /api/ee/serialization."""
from pathlib import Path

from core import Migrations, hookimpl


@hookimpl
def register_migrations():
    return [Migrations("serialization", Path(__file__).parent / "migrations")]


@hookimpl
def register_routes():
    from .views import serialization_api

    return [serialization_api]


@hookimpl
def register_commands(cli):
    from .cli import register

    register(cli)
