"""/api/metric endpoints (legacy metrics). Reading needs data-model permission on the metric's
table (as Metabase's); writes are for administrators."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import metrics as service
from .schemas import DefinitionId as MetricId
from .schemas import ImportantFields, MetricChanges, Revert, RevisionMessage
from .schemas import NewDefinition as NewMetric

metric_api = Api("metrics", __name__, url_prefix="/metric")


@metric_api.get("/")
def list_metrics():
    """Every non-archived legacy metric the caller may read, with creator, database and a description."""
    return service.list_metrics(db.session(), auth.require_user())


@metric_api.get("/<id>", path=MetricId)
def get_metric(path: MetricId):
    """One legacy metric with its creator."""
    return service.get(db.session(), auth.require_user(), path.id)


@metric_api.post("/", body=NewMetric, auth="superuser")
def create_metric(body: NewMetric):
    """Create a legacy metric: one aggregation (and optionally a filter) on one table."""
    return service.create(db.session(), auth.require_user(), body.name, body.description, body.table_id,
                          body.definition)


@metric_api.put("/<id>", path=MetricId, body=MetricChanges, auth="superuser")
def update_metric(path: MetricId, body: MetricChanges):
    """Change or archive a legacy metric; revision_message describes the change in its history."""
    changes = {k: getattr(body, k) for k in body.model_fields_set if k != "revision_message"}
    return service.update(db.session(), auth.require_user(), path.id, changes, body.revision_message)


@metric_api.put("/<id>/important_fields", path=MetricId, body=ImportantFields, auth="superuser")
def update_important_fields(path: MetricId, body: ImportantFields):
    """Set the fields the getting-started guide shows with the metric (at most three)."""
    return service.set_important_fields(db.session(), auth.require_user(), path.id, body.important_field_ids)


@metric_api.delete("/<id>", path=MetricId, query=RevisionMessage, auth="superuser")
def delete_metric(path: MetricId, query: RevisionMessage):
    """Deprecated: archives the metric (pass archived=true to PUT instead)."""
    return service.archive(db.session(), auth.require_user(), path.id, query.revision_message)


@metric_api.get("/<id>/revisions", path=MetricId)
def metric_revisions(path: MetricId):
    """The metric's revisions, newest first, each with its diff from the one before."""
    return service.revisions(db.session(), auth.require_user(), path.id)


@metric_api.post("/<id>/revert", path=MetricId, body=Revert, auth="superuser")
def revert_metric(path: MetricId, body: Revert):
    """Put the metric back in the state of one of its revisions (recorded as a reversion)."""
    return service.revert(db.session(), auth.require_user(), path.id, body.revision_id)


@metric_api.get("/<id>/related", path=MetricId)
def related(path: MetricId):
    """The metric's table and the table's other metrics and its segments."""
    return service.related(db.session(), auth.require_user(), path.id)
