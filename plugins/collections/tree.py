"""GET /api/collection/tree: the readable collections as nested nodes with `children`, and the
kinds of items `here` (directly inside) and `below` (deeper): cards, models, metrics, dashboards.

A node hangs under its nearest ancestor in the listing, so collections below one the user cannot
see still appear, one level up, as in Metabase.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Collection, User
from core.content.collections import Access, location_ids, personal_names
from core.policy.permissions import permission_hooks_active

from .items import kinds_held
from .service import collection_json, readable_collections


def _shallow_filter(rows: list[Collection], collection_id: int | None) -> list[Collection]:
    """The children of `collection_id` (None: the root) and their children."""
    out = []
    for c in rows:
        ids = location_ids(c.location)
        if collection_id is None:
            if len(ids) <= 1:
                out.append(c)
        elif collection_id in ids and len(ids) - ids.index(collection_id) <= 2:
            out.append(c)
    return out


def build_tree(rows: list[Collection], names: dict[int, str], holds: dict[int, set[str]] | None) -> list[dict]:
    nodes = {}
    deeper: dict[int, set[str]] = {}
    if holds is not None:
        for c in rows:
            for ancestor in location_ids(c.location):
                deeper.setdefault(ancestor, set()).update(holds.get(c.id, ()))
    for c in rows:
        node = collection_json(c, names)
        if holds is not None:
            if holds.get(c.id):
                node["here"] = sorted(holds[c.id])
            if deeper.get(c.id):
                node["below"] = sorted(deeper[c.id])
        node["children"] = []
        nodes[c.id] = node
    top = []
    for c in rows:
        parents = [a for a in location_ids(c.location) if a in nodes]
        (nodes[parents[-1]]["children"] if parents else top).append(nodes[c.id])
    return top


def collection_tree(session: Session, user: User, *, exclude_archived: bool = False,
                    exclude_other_users: bool = False, namespace: str | None = None, shallow: bool = False,
                    collection_id: int | None = None) -> list[dict]:
    """The tree as `user` sees it. The app's navigation asks on every page: kept per user and arguments
    while the tables read are unchanged (core.appdb.memo), unless a plugin decides permissions per
    request (check_permission). Shared between requests: callers never modify it."""
    def compute() -> list[dict]:
        return _tree(session, user, exclude_archived, exclude_other_users, namespace, shallow, collection_id)

    if permission_hooks_active():
        return compute()
    key = ("collection tree", user.id, exclude_archived, exclude_other_users, namespace, shallow, collection_id)
    return memo.get_or_compute(session, key, compute)


def _tree(session: Session, user: User, exclude_archived: bool, exclude_other_users: bool, namespace: str | None,
          shallow: bool, collection_id: int | None) -> list[dict]:
    access = Access(session, user)
    rows = readable_collections(session, access, namespace, archived=False if exclude_archived else None,
                                exclude_other_users=exclude_other_users)
    names = personal_names(session, [c.personal_owner_id for c in rows])
    if shallow:
        top = build_tree(_shallow_filter(rows, collection_id), names, None)
        for node in top:
            node["children"] = bool(node["children"])
        return top
    return build_tree(rows, names, kinds_held(session, None))
