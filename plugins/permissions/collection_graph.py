"""The collection permission graph of a namespace: {revision, groups: {group_id: {"root"|id: level}}}.

Every group and every shared collection of the namespace is listed (none where no row exists).
Personal collections, what lies inside them and archived collections are not part of the graph; a
PUT naming them is silently ignored, as Metabase does for personal ones.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import (
    ADMIN_GROUP_ID,
    Collection,
    CollectionPermission,
    PermissionsGroup,
    User,
)
from core.appdb.models.permissions import COLLECTION_GRAPH
from core.assembly import events
from core.http.errors import Invalid

from . import revisions

LEVELS = ("read", "write", "none")


def _namespace_filter(namespace: str):
    if namespace:
        return Collection.namespace == namespace
    return or_(Collection.namespace.is_(None), Collection.namespace == "")


def _collections(session: Session, namespace: str) -> tuple[list[int], set[int]]:
    """(ids of the graph's collections, ids a PUT may name but that are not in the graph: personal
    collections, their descendants and archived collections)."""
    rows = session.execute(select(Collection.id, Collection.location, Collection.personal_owner_id,
                                  Collection.archived).where(_namespace_filter(namespace))).all()
    personal_roots = {cid for cid, _loc, owner, _a in rows if owner is not None}
    personal = set(personal_roots)
    shared = []
    for cid, location, owner, archived in rows:
        ancestors = [int(p) for p in (location or "/").strip("/").split("/") if p]
        if owner is not None or (ancestors and ancestors[0] in personal_roots) or archived:
            personal.add(cid)
        else:
            shared.append(cid)
    return sorted(shared), personal


def collection_graph(session: Session, namespace: str | None) -> dict:
    namespace = namespace or ""
    shared, _ignored = _collections(session, namespace)
    groups = list(session.scalars(select(PermissionsGroup.id).order_by(PermissionsGroup.id)))
    levels: dict[tuple[int, Any], str] = {}
    for row in session.scalars(select(CollectionPermission).where(or_(
            CollectionPermission.collection_id.in_(shared),
            (CollectionPermission.collection_id.is_(None)) & (CollectionPermission.namespace == namespace)))):
        levels[(row.group_id, row.collection_id or "root")] = row.level
    out = {}
    for group_id in groups:
        keys = ["root", *shared]
        out[group_id] = {key: "write" if group_id == ADMIN_GROUP_ID else levels.get((group_id, key), "none")
                         for key in keys}
    return {"revision": revisions.current(session, COLLECTION_GRAPH), "groups": out}


def put_collection_graph(session: Session, user: User, body: dict, namespace: str | None, force: bool) -> dict:
    namespace = namespace or ""
    groups = body.get("groups")
    if not isinstance(groups, dict):
        raise Invalid({"groups": "value must be a map."})
    known_groups = set(session.scalars(select(PermissionsGroup.id)))
    revisions.bump(session, COLLECTION_GRAPH, None if force else body["revision"], user,
                   {"namespace": namespace, "groups": groups})
    try:
        shared, ignored = _collections(session, namespace)
        shared_set = set(shared)
        for group_key, per_collection in groups.items():
            group_id = _id(group_key, "group")
            if group_id not in known_groups:
                raise Invalid(f"Invalid collection permissions graph: there is no group {group_id}.")
            if not isinstance(per_collection, dict):
                raise Invalid(f"Invalid collection permissions graph: the entry of group {group_id} must be a map.")
            if group_id == ADMIN_GROUP_ID:
                continue  # administrators always have write access to every collection
            for key, level in per_collection.items():
                if level not in LEVELS:
                    raise Invalid(f"Invalid collection permissions graph: {level!r} is not read, write or none.")
                collection_id = None if key == "root" else _id(key, "collection")
                if collection_id is not None and collection_id in ignored:
                    continue  # personal or archived: not governed by the graph, dropped as Metabase does
                if collection_id is not None and collection_id not in shared_set:
                    raise Invalid(f"Invalid collection permissions graph: there is no collection {collection_id} "
                                  "in this namespace.")
                _set_level(session, group_id, collection_id, namespace, level)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    events.emit("permissions-graph-update", user.id, None, graph="collection", namespace=namespace)
    return collection_graph(session, namespace)


def _id(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise Invalid(f"Invalid collection permissions graph: {what} {value!r} is not an id.") from None
    if number <= 0:
        raise Invalid(f"Invalid collection permissions graph: {what} {value!r} is not an id.")
    return number


def _set_level(session: Session, group_id: int, collection_id: int | None, namespace: str, level: str) -> None:
    where = [CollectionPermission.group_id == group_id]
    if collection_id is None:
        where += [CollectionPermission.collection_id.is_(None), CollectionPermission.namespace == namespace]
    else:
        where.append(CollectionPermission.collection_id == collection_id)
    session.execute(delete(CollectionPermission).where(*where))
    if level != "none":
        session.add(CollectionPermission(group_id=group_id, collection_id=collection_id, namespace=namespace,
                                         level=level))
