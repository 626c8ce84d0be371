"""Timeline endpoints: /api/timeline, /api/timeline-event, and the timelines of a card or a collection.

The last three live under the cards' and collections' URL space, so they are separate blueprints
whose prefixes (`/card/<id>/timelines`, `/collection/<id>/timelines`, `/collection/root/timelines`)
no other plugin claims (docs/ARCHITECTURE.md, "Prefixes")."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import service
from .schemas import (
    CardTimelinesQuery,
    CollectionTimelinesQuery,
    EventChanges,
    Id,
    ListQuery,
    NewEvent,
    NewTimeline,
    TimelineChanges,
    TimelineQuery,
    present,
)

timeline_api = Api("timeline", __name__, url_prefix="/timeline")
event_api = Api("timeline_event", __name__, url_prefix="/timeline-event")
card_timelines_api = Api("card_timelines", __name__, url_prefix="/card/<id>/timelines")
collection_timelines_api = Api("collection_timelines", __name__, url_prefix="/collection/<id>/timelines")
root_timelines_api = Api("root_timelines", __name__, url_prefix="/collection/root/timelines")


def _events(include) -> bool:
    return include == "events"


@timeline_api.get("/", query=ListQuery)
def list_timelines(query: ListQuery):
    """Timelines in collections the user can read; archived=true lists the archived ones."""
    return service.list_timelines(db.session(), auth.require_user(), _events(query.include), bool(query.archived))


@timeline_api.get("/<id>", path=Id, query=TimelineQuery)
def get_timeline(path: Id, query: TimelineQuery):
    """One timeline; include=events adds its unarchived events (all with archived=true) within start/end."""
    return service.get_timeline(db.session(), auth.require_user(), path.id, _events(query.include),
                                bool(query.archived), query.start, query.end)


@timeline_api.post("/", body=NewTimeline)
def create_timeline(body: NewTimeline):
    """Create a timeline in a collection the user can write (icon defaults to star)."""
    return service.create_timeline(db.session(), auth.require_user(), body.model_dump())


@timeline_api.put("/<id>", path=Id, body=TimelineChanges)
def update_timeline(path: Id, body: TimelineChanges):
    """Change a timeline; archiving it archives its events, unarchiving unarchives them."""
    changes = present(body, nullable=("description", "icon", "collection_id"))
    return service.update_timeline(db.session(), auth.require_user(), path.id, changes)


@timeline_api.delete("/<id>", path=Id, status=204)
def delete_timeline(path: Id):
    """Delete a timeline and its events."""
    service.delete_timeline(db.session(), auth.require_user(), path.id)


@timeline_api.get("/collection/root", query=CollectionTimelinesQuery)
def root_collection_timelines(query: CollectionTimelinesQuery):
    """The root collection's timelines."""
    return service.collection_timelines(db.session(), auth.require_user(), None, _events(query.include),
                                        bool(query.archived))


@timeline_api.get("/collection/<id>", path=Id, query=CollectionTimelinesQuery)
def collection_timelines(path: Id, query: CollectionTimelinesQuery):
    """A collection's timelines."""
    return service.collection_timelines(db.session(), auth.require_user(), path.id, _events(query.include),
                                        bool(query.archived))


@timeline_api.get("/card/<id>", path=Id, query=CardTimelinesQuery)
def card_timelines(path: Id, query: CardTimelinesQuery):
    """The timelines of the card's collection."""
    return service.card_timelines(db.session(), auth.require_user(), path.id, _events(query.include),
                                  query.start, query.end)


# The same three under the card's and the collection's own URLs (Metabase's older paths, in API-SPEC).


@card_timelines_api.get("/", path=Id, query=CardTimelinesQuery)
def card_timelines_under_card(path: Id, query: CardTimelinesQuery):
    """The timelines of the card's collection."""
    return card_timelines(path=path, query=query)


@collection_timelines_api.get("/", path=Id, query=CollectionTimelinesQuery)
def collection_timelines_under_collection(path: Id, query: CollectionTimelinesQuery):
    """A collection's timelines."""
    return collection_timelines(path=path, query=query)


@root_timelines_api.get("/", query=CollectionTimelinesQuery)
def root_timelines_under_collection(query: CollectionTimelinesQuery):
    """The root collection's timelines."""
    return root_collection_timelines(query=query)


# --------------------------------------------------------------------------------------------------
# /api/timeline-event
# --------------------------------------------------------------------------------------------------


@event_api.post("/", body=NewEvent)
def create_event(body: NewEvent):
    """Create an event on a timeline the user can write; its icon defaults to the timeline's."""
    return service.create_event(db.session(), auth.require_user(), body.model_dump())


@event_api.get("/<id>", path=Id)
def get_event(path: Id):
    """One event."""
    return service.get_event(db.session(), auth.require_user(), path.id)


@event_api.put("/<id>", path=Id, body=EventChanges)
def update_event(path: Id, body: EventChanges):
    """Change an event (also move it to another timeline the user can write)."""
    changes = present(body, nullable=("description", "icon"))
    return service.update_event(db.session(), auth.require_user(), path.id, changes)


@event_api.delete("/<id>", path=Id, status=204)
def delete_event(path: Id):
    """Delete an event."""
    service.delete_event(db.session(), auth.require_user(), path.id)
