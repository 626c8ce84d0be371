"""Legacy metric logic: logic.py with the LegacyMetric model, plus the important fields."""
from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.appdb.models import Field, LegacyMetric, MetricImportantField, User
from core.content import related as core_related
from core.http.errors import Invalid

from . import logic as definitions

MAX_IMPORTANT_FIELDS = 3


def list_metrics(session: Session, user: User) -> list[dict]:
    return definitions.list_all(session, user, LegacyMetric)


def important_field_ids(session: Session, metric_id: int) -> list[int]:
    return sorted(session.scalars(select(MetricImportantField.field_id)
                                  .where(MetricImportantField.metric_id == metric_id)))


def get(session: Session, user: User, metric_id: int) -> dict:
    out = definitions.get(session, user, LegacyMetric, metric_id)
    out["important_field_ids"] = important_field_ids(session, metric_id)
    return out


def create(session: Session, user: User, name: str, description: str | None, table_id: int, definition: dict) -> dict:
    return definitions.create(session, user, LegacyMetric, name=name, description=description, table_id=table_id,
                              definition=definition)


def update(session: Session, user: User, metric_id: int, changes: dict, message: str) -> dict:
    return definitions.update(session, user, LegacyMetric, metric_id, changes, message)


def archive(session: Session, user: User, metric_id: int, message: str) -> dict:
    definitions.update(session, user, LegacyMetric, metric_id, {"archived": True}, message)
    return {"success": True}


def revisions(session: Session, user: User, metric_id: int) -> list[dict]:
    return definitions.history(session, user, LegacyMetric, metric_id)


def revert(session: Session, user: User, metric_id: int, revision_id: int) -> dict:
    return definitions.revert(session, user, LegacyMetric, metric_id, revision_id)


def set_important_fields(session: Session, user: User, metric_id: int, field_ids: list[int]) -> dict:
    """Replace the metric's important fields (at most three, as Metabase) in one transaction."""
    definitions.fetch(session, user, LegacyMetric, metric_id)
    wanted = list(dict.fromkeys(field_ids))
    if len(wanted) > MAX_IMPORTANT_FIELDS:
        raise Invalid("A Metric can have a maximum of 3 important fields.")
    known = set(session.scalars(select(Field.id).where(Field.id.in_(wanted)))) if wanted else set()
    missing = [f for f in wanted if f not in known]
    if missing:
        raise Invalid({"important_field_ids": f"Field {missing[0]} does not exist."})
    current = set(important_field_ids(session, metric_id))
    gone = current - set(wanted)
    if gone:
        session.execute(delete(MetricImportantField).where(MetricImportantField.metric_id == metric_id,
                                                           MetricImportantField.field_id.in_(gone)))
    session.add_all(MetricImportantField(metric_id=metric_id, field_id=f) for f in wanted if f not in current)
    session.commit()
    return {"success": True}


def related(session: Session, user: User, metric_id: int) -> dict:
    """Metabase's related entities of a legacy metric (core.content.related)."""
    metric = definitions.fetch(session, user, LegacyMetric, metric_id)
    return core_related.for_legacy_metric(session, user, metric)
