"""/api/pulse: legacy pulses and dashboard subscriptions (e-mail with the cards' charts inline, tables
and CSV/XLSX attachments, or JSON posted to a webhook), each channel's schedule a job on the core
scheduler; /api/alert: alerts on a question (pulses with a condition, checked at send time);
/api/notification: the same stored pulses in Metabase's notification shapes; /api/channel: the webhook
destinations; system events (a first sign-in, a failed sync, an alert's question archived) e-mailed."""
from pathlib import Path

from core import Migrations, hookimpl
from core.assembly import events

from . import models  # noqa: F401  (the plugin's tables join core.appdb.models.Base when it loads)
from .alert_views import alert_api
from .channel_views import channel_api
from .notification_views import notification_api
from .scheduling import JOB_KIND
from .system_events import SYSTEM_EVENTS, deliver
from .views import pulse_api


@hookimpl
def register_migrations():
    return [Migrations("subscriptions", Path(__file__).parent / "migrations")]


@hookimpl
def register_routes():
    return [pulse_api, channel_api, alert_api, notification_api]


@hookimpl
def register_job_kinds():
    return [JOB_KIND]


@hookimpl
def register_system_events():
    return list(SYSTEM_EVENTS)


@hookimpl
@events.following(lambda state: {system_event.topic for system_event in state.system_events.values()})
def track_event(event):
    deliver(event)
