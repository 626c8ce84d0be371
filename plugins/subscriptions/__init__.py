"""/api/pulse: legacy pulses and dashboard subscriptions (e-mail with the cards' charts inline, tables
and CSV/XLSX attachments), each channel's schedule a job on the core scheduler."""
from pathlib import Path

from core import Migrations, hookimpl

from . import models  # noqa: F401  (the plugin's tables join core.appdb.models.Base when it loads)
from .scheduling import JOB_KIND
from .views import pulse_api


@hookimpl
def register_migrations():
    return [Migrations("subscriptions", Path(__file__).parent / "migrations")]


@hookimpl
def register_routes():
    return [pulse_api]


@hookimpl
def register_job_kinds():
    return [JOB_KIND]
