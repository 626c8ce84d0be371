"""The items listing kept per permission set: what a collection's (or the root's) items are for every
caller of the same groups, computed once and kept in core.appdb.memo while the tables it read are
unchanged, with each caller's own part laid over it.

What decides a listing for a caller, besides the request's arguments, is their group set and whether
they are an administrator (their rights on every collection that is not personal), and their own
personal collection, the one collection only they (and administrators, who list it only by opening it)
see. So the listing is kept in two parts: the SHARED part (every item but personal collections) under
the group set, and the PERSONAL part (the caller's personal collection, an item of the root only) under
the caller; the two are merged, sorted and paged per request. The inside of a personal collection is
listed whole under the caller.

Both parts are hydrated whole (not a page): the page depends on the merge. The last use of cards and
dashboards is laid over the page from the stored counts (core.content.viewing), which a flush of
views moves without ending the kept listing.

While a plugin implements check_permission, the hook decides per object and caller: the listing is
then computed per request (items.list_items), as it always was.
"""
from __future__ import annotations

import dataclasses

from sqlalchemy.orm import Session

from core.appdb import memo
from core.appdb.models import Collection, User
from core.content import viewing
from core.content.collections import Access
from core.http.paging import Paging
from core.policy import permissions
from core.policy.audience import audience_key

from . import items

# Roughly the bytes one item's key and JSON take in memory: every part is hydrated whole, so a large
# collection's listing counts against the memo's byte budget.
ITEM_WEIGHT = 2048


def collection_items(session: Session, user: User, access: Access, collection: Collection | None,
                     namespace: str | None, models: set[str], options: items.Options, paging: Paging) -> dict:
    """{total, data, models, limit, offset} of the items the caller may see in `collection` (None: the
    root of `namespace`, which the caller may read or not: `models` says what they see there)."""
    if permissions.permission_hooks_active():
        return items.list_items(items.Context(session, access, collection, namespace, options), models, paging)
    wanted = items.wanted_models(namespace, models)
    arguments = (collection.id if collection is not None else None, namespace, tuple(wanted),
                 dataclasses.astuple(options))
    if collection is not None and _in_personal(session, collection):
        keys, hydrated = _part(session, access, collection, namespace, options, wanted, items.ALL,
                               user.id, arguments)
    else:
        keys, hydrated = _part(session, access, collection, namespace, options, wanted, items.SHARED,
                               audience_key(session, user), arguments)
        if collection is None and namespace is None and "collection" in wanted:  # where personal ones live
            own_keys, own = _part(session, access, None, namespace, options, ["collection"], items.PERSONAL,
                                  user.id, arguments)
            if own_keys:
                keys = [*keys, *own_keys]
                items.sort_keys(keys, options)
                hydrated = {**hydrated, **own}
    page = paging.apply(keys)
    data = _with_last_use(session, [hydrated[(k.model, k.id)] for k in page])
    return items.listing_json(namespace, wanted, len(keys), data, paging)


def _part(session: Session, access: Access, collection: Collection | None, namespace: str | None,
          options: items.Options, wanted: list[str], part: str, whose, arguments: tuple
          ) -> tuple[list[items.Key], dict]:
    """(sort keys in order, item JSON by (model, id)) of one part, kept under the part, `whose` it is
    (the caller's group set for the SHARED part, else the caller) and the request's `arguments`. The
    keys kept hold no ORM object: the answer is shared between requests and threads."""
    key = ("collection items", part, whose, arguments)

    def compute():
        ctx = items.Context(session, access, collection, namespace, options, part=part)
        keys = items.listed_keys(ctx, wanted)
        hydrated = items.hydrate(ctx, keys)
        return tuple(dataclasses.replace(k, ref=None) for k in keys), hydrated

    keys, hydrated = memo.get_or_compute(session, key, compute, weigh=lambda kept: ITEM_WEIGHT * len(kept[0]))
    return list(keys), hydrated


def _in_personal(session: Session, collection: Collection) -> bool:
    return permissions.personal_owner_id(session, collection) is not None


def _with_last_use(session: Session, page: list[dict]) -> list[dict]:
    """The page's items with their last use as stored now (the kept JSON may be older), for every
    source that declares where its items' last use is stored."""
    stored = {}
    for source in items.sources():
        if getattr(source, "last_use", None) is None:
            continue
        table, column = source.last_use
        ids = [item["id"] for item in page if item["model"] in source.models]
        for item_id, (_count, latest) in viewing.stored_counts(session, table, ids, column).items():
            stored.update(((model, item_id), latest) for model in source.models)
    out = []
    for item in page:
        latest = stored.get((item["model"], item["id"]), item.get("last_used_at"))
        out.append(item if latest == item.get("last_used_at") else {**item, "last_used_at": latest})
    return out
