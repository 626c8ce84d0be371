"""Collections: listing, detail, the root, creating, editing, moving, archiving and unarchiving.

Rights come from core.policy.permissions through core.content.collections.Access. Moving and archiving rewrite
the materialised `location` of a whole subtree, and archiving reaches the items inside; each change
is one transaction, committed here.
"""
from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import ADMIN_GROUP_ID, Collection, CollectionPermission, User
from core.appdb.models.base import new_entity_id
from core.assembly import events
from core.content.collections import (
    Access,
    children_location,
    location_ids,
    namespace_clause,
    normalize_namespace,
    parent_id,
    personal_names,
    personal_owner,
    personal_root_ids,
    root_json,
    slugify,
)
from core.content.collections import (
    row_json as collection_json,  # also imported by tree.py
)
from core.http.errors import Invalid, NotFound, check_403

from . import items as item_sources
from . import listing


def _sort_key(collection: Collection):
    # Metabase's order: official first, normal collections before special ones, then lower(name).
    return (collection.authority_level != "official", collection.type is not None,
            (collection.name or "").lower(), collection.id)


def _get(session: Session, collection_id: int) -> Collection:
    collection = session.get(Collection, collection_id)
    if collection is None:
        raise NotFound()
    return collection


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------


def readable_collections(session: Session, access: Access, namespace: str | None, *, archived: bool | None,
                         exclude_other_users: bool, personal_only: bool = False) -> list[Collection]:
    """The collections of a namespace the caller may read, in Metabase's list order."""
    query = select(Collection).where(namespace_clause(namespace))
    if archived is not None:
        query = query.where(Collection.archived.is_(archived))
    if personal_only:
        query = query.where(Collection.personal_owner_id.is_not(None))
    ids = access.readable_ids()
    if ids is not None:
        query = query.where(Collection.id.in_(ids))
    rows = [c for c in session.scalars(query) if access.can_read(c.id)]
    if exclude_other_users:
        roots = personal_root_ids(session)
        rows = [c for c in rows if personal_owner(c, roots) in (None, access.user.id)]
    return sorted(rows, key=_sort_key)


def list_collections(session: Session, user: User, *, archived: bool = False, exclude_other_users: bool = False,
                     namespace: str | None = None, personal_only: bool = False) -> list[dict]:
    access = Access(session, user)
    rows = readable_collections(session, access, namespace, archived=archived,
                                exclude_other_users=exclude_other_users, personal_only=personal_only)
    roots = personal_root_ids(session)
    names = personal_names(session, [c.personal_owner_id for c in rows])
    out = [{**collection_json(c, names), "is_personal": personal_owner(c, roots) is not None,
            "can_write": access.can_write(c.id), "can_delete": False} for c in rows]
    if not archived and not personal_only and access.can_read(None, namespace):
        out.insert(0, {**root_json(namespace), "can_write": access.can_write(None, namespace), "can_delete": False})
    return out


def detail_json(session: Session, access: Access, collection: Collection) -> dict:
    roots = personal_root_ids(session)
    ancestor_ids = location_ids(collection.location)
    ancestors = {c.id: c for c in session.scalars(select(Collection).where(Collection.id.in_(ancestor_ids)))}
    names = personal_names(session, [collection.personal_owner_id, *(a.personal_owner_id for a in ancestors.values())])
    readable = [i for i in ancestor_ids if i in ancestors and access.can_read(i)]
    effective_ancestors = []
    if access.can_read(None, collection.namespace):
        effective_ancestors.append({**root_json(collection.namespace), "type": None, "personal_owner_id": None,
                                    "can_write": access.can_write(None, collection.namespace)})
    for i in readable:
        ancestor = ancestors[i]
        effective_ancestors.append({
            "id": ancestor.id, "name": names.get(ancestor.personal_owner_id, ancestor.name) if ancestor.personal_owner_id
            else ancestor.name, "authority_level": ancestor.authority_level, "type": ancestor.type,
            "personal_owner_id": ancestor.personal_owner_id,
            "is_personal": personal_owner(ancestor, roots) is not None, "can_write": access.can_write(ancestor.id)})
    parent = ancestors.get(parent_id(collection)) if parent_id(collection) else None
    can_write = access.can_write(collection.id)
    return {
        **collection_json(collection, names),
        "parent_id": parent_id(collection),
        "effective_location": "/" + "".join(f"{i}/" for i in readable),
        "effective_ancestors": effective_ancestors,
        "can_write": can_write,
        "is_personal": personal_owner(collection, roots) is not None,
        "can_restore": bool(collection.archived and collection.archived_directly and can_write
                            and not (parent is not None and parent.archived)),
        "can_delete": False,
    }


def get_collection(session: Session, user: User, collection_id: int) -> dict:
    collection = _get(session, collection_id)
    access = Access(session, user)
    check_403(access.can_read(collection.id))
    return detail_json(session, access, collection)


def get_root(session: Session, user: User, namespace: str | None) -> dict:
    access = Access(session, user)
    check_403(access.can_read(None, namespace))
    return {**root_json(namespace), "parent_id": None, "effective_location": None, "effective_ancestors": [],
            "can_write": access.can_write(None, namespace), "can_restore": False, "can_delete": False}


# --------------------------------------------------------------------------------------------------
# Creating and editing
# --------------------------------------------------------------------------------------------------


def create_collection(session: Session, user: User, *, name: str, description: str | None = None,
                      parent_id: int | None = None, namespace: str | None = None,
                      authority_level: str | None = None, color: str | None = None) -> dict:
    access = Access(session, user)
    namespace = normalize_namespace(namespace)
    parent = None
    if parent_id is not None:
        parent = _get(session, parent_id)
        check_403(access.can_write(parent.id))
        if normalize_namespace(parent.namespace) != namespace:
            raise Invalid({"location": "Collection must be in the same namespace as its parent"})
        if parent.archived:
            raise Invalid({"parent_id": "You cannot create a Collection inside an archived Collection."})
    else:
        check_403(access.can_write(None, namespace))
    if authority_level is not None:
        check_403(user.is_superuser)
    collection = Collection(name=name, description=description, color=color, namespace=namespace,
                            authority_level=authority_level, location=children_location(parent),
                            slug=slugify(name), entity_id=new_entity_id(), archived=False)
    session.add(collection)
    session.commit()
    events.emit("collection-create", user.id, collection)
    return detail_json(session, Access(session, user), collection)


def update_collection(session: Session, user: User, collection_id: int, changes: dict) -> dict:
    """Apply the keys present in `changes` (name, description, color, authority_level, archived,
    parent_id): edit, archive or unarchive (optionally into `parent_id`), or move."""
    collection = _get(session, collection_id)
    access = Access(session, user)
    check_403(access.can_write(collection.id))
    personal = collection.personal_owner_id is not None
    if "authority_level" in changes and changes["authority_level"] != collection.authority_level:
        if personal:
            raise Invalid({"authority_level":
                           "You are not allowed to change the authority level of a Personal Collection."})
        check_403(user.is_superuser)
        collection.authority_level = changes["authority_level"]
    if personal and changes.get("archived"):
        raise Invalid({"archived": "You cannot archive a Personal Collection."})
    if personal and "parent_id" in changes and changes["parent_id"] is not None:
        raise Invalid({"location": "You are not allowed to move a Personal Collection."})
    if changes.get("name") is not None:
        collection.name = changes["name"]
        collection.slug = slugify(changes["name"])
    for key in ("description", "color"):
        if key in changes:
            setattr(collection, key, changes[key])
    archived = changes.get("archived")
    if archived is not None and archived != collection.archived:
        if archived:
            _archive(session, access, collection)
        else:
            _unarchive(session, access, collection, changes)
    elif "parent_id" in changes and not personal:
        _move(session, access, collection, changes["parent_id"])
    session.commit()
    events.emit("collection-update", user.id, collection)
    return detail_json(session, Access(session, user), collection)


def _descendants(session: Session, collection: Collection, *conditions) -> list[Collection]:
    prefix = children_location(collection)
    return list(session.scalars(select(Collection).where(
        Collection.location.startswith(prefix, autoescape=True), *conditions)))


def _check_parent_writable(access: Access, collection: Collection) -> None:
    parent = parent_id(collection)
    check_403(access.can_write(parent, collection.namespace) if parent is None else access.can_write(parent))


def _archive(session: Session, access: Access, collection: Collection) -> None:
    """Archive a collection with every collection below it not already archived, and their items;
    all of them share one archive operation id so that unarchiving restores exactly that set."""
    descendants = _descendants(session, collection)
    _check_parent_writable(access, collection)
    for descendant in descendants:
        check_403(access.can_write(descendant.id))
    operation = str(uuid.uuid4())
    collection.archived, collection.archived_directly, collection.archive_operation_id = True, True, operation
    affected = [collection.id]
    for descendant in descendants:
        if not descendant.archived:
            descendant.archived, descendant.archived_directly = True, False
            descendant.archive_operation_id = operation
            affected.append(descendant.id)
    item_sources.archive_items(session, affected, True)


def _unarchive(session: Session, access: Access, collection: Collection, changes: dict) -> None:
    """Unarchive a collection and what was archived with it, into `parent_id` when given."""
    if "parent_id" in changes:
        new_parent_id = changes["parent_id"]
    else:
        if not collection.archived_directly:
            raise Invalid("This Collection was archived with its parent: unarchive the parent, or give a parent_id.")
        new_parent_id = parent_id(collection)
    new_parent = session.get(Collection, new_parent_id) if new_parent_id is not None else None
    if new_parent_id is not None and (new_parent is None or new_parent.archived):
        raise Invalid({"parent_id": "The new parent Collection does not exist or is archived."})
    if normalize_namespace(new_parent.namespace if new_parent else collection.namespace) != \
            normalize_namespace(collection.namespace):
        raise Invalid({"location": "Collection must be in the same namespace as its parent"})
    new_location = children_location(new_parent)
    if collection.id in location_ids(new_location):
        raise Invalid("You cannot move a Collection into itself or into one of its descendants.")
    if new_location != collection.location:
        check_403(access.can_write(new_parent_id, collection.namespace) if new_parent is None
                  else access.can_write(new_parent.id))
    operation = collection.archive_operation_id
    old_prefix = children_location(collection)
    restored = [d for d in _descendants(session, collection)
                if d.archived and d.archive_operation_id == operation and d.archived_directly is not True]
    moved_descendants = _descendants(session, collection)
    was_personal = _in_personal(session, collection)
    collection.location = new_location
    new_prefix = children_location(collection)
    for descendant in moved_descendants:
        descendant.location = new_prefix + descendant.location[len(old_prefix):]
    collection.archived, collection.archived_directly, collection.archive_operation_id = False, None, None
    for descendant in restored:
        descendant.archived, descendant.archived_directly, descendant.archive_operation_id = False, None, None
    item_sources.archive_items(session, [collection.id, *(d.id for d in restored)], False)
    _cross_personal_boundary(session, collection, moved_descendants, was_personal)


def _move(session: Session, access: Access, collection: Collection, new_parent_id: int | None) -> None:
    new_parent = _get(session, new_parent_id) if new_parent_id is not None else None
    new_location = children_location(new_parent)
    if new_location == collection.location:
        return
    if collection.id in location_ids(new_location):
        raise Invalid("You cannot move a Collection into itself or into one of its descendants.")
    if normalize_namespace(new_parent.namespace if new_parent else collection.namespace) != \
            normalize_namespace(collection.namespace):
        raise Invalid({"location": "Collection must be in the same namespace as its parent"})
    if new_parent is not None and new_parent.archived:
        raise Invalid({"parent_id": "You cannot move a Collection into an archived Collection."})
    descendants = _descendants(session, collection)
    _check_parent_writable(access, collection)
    for descendant in descendants:
        check_403(access.can_write(descendant.id))
    check_403(access.can_write(None, collection.namespace) if new_parent is None else access.can_write(new_parent.id))
    was_personal = _in_personal(session, collection)
    old_prefix = children_location(collection)
    collection.location = new_location
    new_prefix = children_location(collection)
    for descendant in descendants:
        descendant.location = new_prefix + descendant.location[len(old_prefix):]
    _cross_personal_boundary(session, collection, descendants, was_personal)


def _in_personal(session: Session, collection: Collection) -> bool:
    return personal_owner(collection, personal_root_ids(session)) is not None


def _cross_personal_boundary(session: Session, collection: Collection, descendants: list[Collection],
                             was_personal: bool) -> None:
    """Collections inside personal collections carry no permission rows (ownership decides); ones
    outside need them. Moving across that boundary drops the rows, or gives the subtree the new
    parent's rows, so that nobody loses or gains access silently (Metabase does the same)."""
    now_personal = _in_personal(session, collection)
    if was_personal == now_personal:
        return
    ids = [collection.id, *(d.id for d in descendants)]
    session.flush()
    if now_personal:
        session.query(CollectionPermission).filter(CollectionPermission.collection_id.in_(ids)).delete(
            synchronize_session=False)
        return
    parent = parent_id(collection)
    table = CollectionPermission.__table__
    if parent is None:
        source = select(table.c.group_id, table.c.level).where(
            table.c.collection_id.is_(None), table.c.namespace == (collection.namespace or ""))
    else:
        source = select(table.c.group_id, table.c.level).where(table.c.collection_id == parent)
    grants = session.execute(source).all()
    for cid in ids:
        for group_id, level in grants:
            if group_id == ADMIN_GROUP_ID:
                continue
            session.add(CollectionPermission(group_id=group_id, collection_id=cid,
                                             namespace=collection.namespace or "", level=level))



# --------------------------------------------------------------------------------------------------
# Items
# --------------------------------------------------------------------------------------------------


def collection_items(session: Session, user: User, collection_id: int | None, *, models: list[str] | None,
                     options: item_sources.Options, paging, namespace: str | None = None) -> dict:
    """The items of a collection, or of the root of `namespace` when collection_id is None."""
    access = Access(session, user)
    wanted = set(models or ())
    if collection_id is None:
        collection = None
        if not access.can_read(None, namespace):
            # Without root access a user still sees the collections they can read at top level.
            wanted = {"collection"} if not wanted or "collection" in wanted else {"no_models"}
    else:
        collection = _get(session, collection_id)
        check_403(access.can_read(collection.id))
        namespace = collection.namespace
        if collection.archived:
            options.archived = True
    if "no_models" in wanted:
        wanted = {"no_models"}
    return listing.collection_items(session, user, access, collection, normalize_namespace(namespace), wanted,
                                    options, paging)
