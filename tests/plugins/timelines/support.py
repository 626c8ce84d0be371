"""Helpers of the timeline tests: collections with chosen permissions, cards, timelines and events."""
from __future__ import annotations

from sqlalchemy import delete

from core.appdb.models import Card, CollectionPermission


def store(app):
    return app.extensions["tessera"].db


def set_perm(app, group_id, collection_id, level):
    """A group's level on a collection (None: the root), written directly in the permission rows."""
    with app.app_context(), store(app).session() as session:
        clause = (CollectionPermission.collection_id.is_(None) & (CollectionPermission.namespace == "")
                  if collection_id is None else CollectionPermission.collection_id == collection_id)
        session.execute(delete(CollectionPermission).where(CollectionPermission.group_id == group_id, clause))
        if level != "none":
            session.add(CollectionPermission(group_id=group_id, collection_id=collection_id, namespace="",
                                             level=level))


def add_card(app, name, collection_id=None, creator_id=1):
    with app.app_context(), store(app).session() as session:
        card = Card(name=name, display="table", dataset_query={"type": "query", "database": 1}, type="question",
                    collection_id=collection_id, creator_id=creator_id)
        session.add(card)
        session.flush()
        return card.id


def timeline(client, name, **kw):
    response = client.post("/api/timeline", json={"name": name, **kw})
    assert response.status_code == 200, response.json
    return response.json


def event(client, timeline_id, name, timestamp, **kw):
    response = client.post("/api/timeline-event", json={"name": name, "timestamp": timestamp, "timezone": "UTC",
                                                        "timeline_id": timeline_id, **kw})
    assert response.status_code == 200, response.json
    return response.json
