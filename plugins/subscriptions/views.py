"""/api/pulse endpoints (thin: parse, one service call, dump)."""
from __future__ import annotations

from flask import Response

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import previews, scheduling, service, testing
from .schemas import ListQuery, NewPulse, PngQuery, PulseChanges, PulseId, TestPulse

pulse_api = Api("subscriptions", __name__, url_prefix="/pulse")


def _registry():
    return auth.tessera().settings


@pulse_api.get("/", query=ListQuery)
def list_pulses(query: ListQuery):
    """Subscriptions the caller may write; with creator_or_recipient, those created by or sent to the caller."""
    return service.list_pulses(db.session(), auth.require_user(), bool(query.archived), query.dashboard_id,
                               bool(query.creator_or_recipient))


@pulse_api.get("/form_input")
def form_input():
    """Which channels exist and which are configured."""
    return previews.form_input(db.session(), _registry())


@pulse_api.get("/<id>", path=PulseId)
def get_pulse(path: PulseId):
    """One subscription (a recipient without collection access gets it without cards and recipients)."""
    return service.read_pulse(db.session(), auth.require_user(), path.id)


@pulse_api.post("/", body=NewPulse)
def create_pulse(body: NewPulse):
    """Create a pulse or dashboard subscription; each channel's schedule becomes a scheduled job."""
    return service.create(db.session(), auth.require_user(), body.model_dump(), on_change=scheduling.reschedule)


@pulse_api.put("/<id>", path=PulseId, body=PulseChanges)
def update_pulse(path: PulseId, body: PulseChanges):
    """Change a subscription's name, cards, channels, collection, parameters or archived state."""
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    return service.update(db.session(), auth.require_user(), path.id, changes, on_change=scheduling.reschedule)


@pulse_api.post("/test", body=TestPulse)
def test_pulse(body: TestPulse):
    """Send an unsaved pulse now."""
    return testing.send_test(db.session(), auth.require_user(), _registry(), body.model_dump())


@pulse_api.delete("/<id>/subscription", path=PulseId, status=204)
def unsubscribe(path: PulseId):
    """The caller stops receiving the subscription."""
    service.unsubscribe(db.session(), auth.require_user(), path.id)


@pulse_api.get("/preview_card/<id>", path=PulseId)
def preview_card(path: PulseId):
    """The card as a subscription shows it, as an HTML page."""
    return Response(previews.card_page(db.session(), auth.require_user(), path.id), mimetype="text/html")


@pulse_api.get("/preview_card_info/<id>", path=PulseId)
def preview_card_info(path: PulseId):
    """The card's subscription HTML with its type, name, link and size."""
    return previews.card_info(db.session(), auth.require_user(), auth.tessera().settings, path.id)


@pulse_api.get("/preview_card_png/<id>", path=PulseId, query=PngQuery)
def preview_card_png(path: PulseId, query: PngQuery):
    """The card drawn as a PNG (400 pixels wide unless width says otherwise)."""
    png = previews.card_png(db.session(), auth.require_user(), path.id, query.width)
    return Response(png, mimetype="image/png")


@pulse_api.get("/preview_dashboard/<id>", path=PulseId)
def preview_dashboard(path: PulseId):
    """The dashboard's cards as a subscription e-mail shows them, as an HTML page."""
    return Response(previews.dashboard_page(db.session(), auth.require_user(), path.id), mimetype="text/html")
