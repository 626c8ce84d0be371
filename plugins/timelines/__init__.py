"""/api/timeline and /api/timeline-event: timelines of dated events that live in collections, plus the
timelines of a card's or a collection's collection (GET /api/card/:id/timelines,
/api/collection/:id/timelines, /api/collection/root/timelines), mounted as their own blueprints."""
from core import hookimpl

from .views import (
    card_timelines_api,
    collection_timelines_api,
    event_api,
    root_timelines_api,
    timeline_api,
)


@hookimpl
def register_routes():
    return [timeline_api, event_api, card_timelines_api, collection_timelines_api, root_timelines_api]
