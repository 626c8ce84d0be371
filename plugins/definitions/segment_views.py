"""/api/segment endpoints. Reading needs data-model permission on the segment's
table (as Metabase's); writes are for administrators."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import segments as service
from .schemas import DefinitionChanges as SegmentChanges
from .schemas import DefinitionId as SegmentId
from .schemas import NewDefinition as NewSegment
from .schemas import Revert, RevisionMessage

segment_api = Api("segments", __name__, url_prefix="/segment")


@segment_api.get("/")
def list_segments():
    """Every non-archived segment the caller may read, with its creator and a description of its filter."""
    return service.list_segments(db.session(), auth.require_user())


@segment_api.get("/<id>", path=SegmentId)
def get_segment(path: SegmentId):
    """One segment with its creator."""
    return service.get(db.session(), auth.require_user(), path.id)


@segment_api.post("/", body=NewSegment, auth="superuser")
def create_segment(body: NewSegment):
    """Create a segment: a filter on one table, checked against that table."""
    return service.create(db.session(), auth.require_user(), body.name, body.description, body.table_id,
                          body.definition)


@segment_api.put("/<id>", path=SegmentId, body=SegmentChanges, auth="superuser")
def update_segment(path: SegmentId, body: SegmentChanges):
    """Change or archive a segment; revision_message describes the change in its history."""
    changes = {k: getattr(body, k) for k in body.model_fields_set if k != "revision_message"}
    return service.update(db.session(), auth.require_user(), path.id, changes, body.revision_message)


@segment_api.delete("/<id>", path=SegmentId, query=RevisionMessage, auth="superuser", status=204)
def delete_segment(path: SegmentId, query: RevisionMessage):
    """Deprecated: archives the segment (pass archived=true to PUT instead)."""
    service.archive(db.session(), auth.require_user(), path.id, query.revision_message)


@segment_api.get("/<id>/revisions", path=SegmentId)
def segment_revisions(path: SegmentId):
    """The segment's revisions, newest first, each with its diff from the one before."""
    return service.revisions(db.session(), auth.require_user(), path.id)


@segment_api.post("/<id>/revert", path=SegmentId, body=Revert, auth="superuser")
def revert_segment(path: SegmentId, body: Revert):
    """Put the segment back in the state of one of its revisions (recorded as a reversion)."""
    return service.revert(db.session(), auth.require_user(), path.id, body.revision_id)


@segment_api.get("/<id>/related", path=SegmentId)
def related(path: SegmentId):
    """The segment's table, the table's metrics and other segments, tables linking to it."""
    return service.related(db.session(), auth.require_user(), path.id)
