"""What every plugin needs to know about collections: the virtual root, location paths, personal
collection names, and the per-request access cache that asks core.policy.permissions once per collection.

Cards, dashboards, snippets and search put objects into collections or show which collection an
object is in; they use these helpers so that the root object, the display names of personal
collections and the permission answers are the same everywhere.
"""
from __future__ import annotations

import re
import unicodedata
import urllib.parse

from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session

from core.appdb.models import Collection, User
from core.http.errors import Invalid, NotFound, check_403
from core.policy import permissions

SNIPPETS = "snippets"
ROOT_NAMES = {SNIPPETS: "Top folder"}
DEFAULT_ROOT_NAME = "Our analytics"
COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")
SLUG_MAX_LENGTH = 510


def normalize_namespace(namespace: str | None) -> str | None:
    """The default namespace is stored as NULL; "" and None both mean it."""
    return namespace or None


def namespace_clause(namespace: str | None):
    namespace = normalize_namespace(namespace)
    if namespace is None:
        return or_(Collection.namespace.is_(None), Collection.namespace == "")
    return Collection.namespace == namespace


def slugify(name: str) -> str:
    """Metabase's slug: lower case, accents dropped, ASCII letters and digits kept, other ASCII
    characters replaced by "_", other characters percent-encoded."""
    text = "".join(c for c in unicodedata.normalize("NFKD", name.lower()) if not unicodedata.combining(c))
    out = []
    for char in text:
        if char.isascii():
            out.append(char if char.isalnum() else "_")
        else:
            out.append(urllib.parse.quote(char))
    return "".join(out)[:SLUG_MAX_LENGTH]


# --------------------------------------------------------------------------------------------------
# Location paths: "/" at top level, "/4/9/" below 9 below 4
# --------------------------------------------------------------------------------------------------


def location_ids(location: str | None) -> list[int]:
    return [int(part) for part in (location or "/").strip("/").split("/") if part]


def children_location(collection: Collection | None) -> str:
    """The location every child of `collection` (None: the root) has."""
    if collection is None:
        return "/"
    return f"{collection.location}{collection.id}/"


def parent_id(collection: Collection) -> int | None:
    ids = location_ids(collection.location)
    return ids[-1] if ids else None


def root_json(namespace: str | None = None) -> dict:
    namespace = normalize_namespace(namespace)
    return {"id": "root", "name": ROOT_NAMES.get(namespace or "", DEFAULT_ROOT_NAME), "namespace": namespace,
            "is_personal": False, "authority_level": None}


# --------------------------------------------------------------------------------------------------
# Personal collections
# --------------------------------------------------------------------------------------------------


def personal_name(first_name: str | None, last_name: str | None, email: str) -> str:
    """Metabase's rule: "First Last's ...", else the first of first name, last name, email."""
    if first_name and last_name:
        return f"{first_name} {last_name}'s Personal Collection"
    return f"{first_name or last_name or email}'s Personal Collection"


_OWNER_NAMES = select(User.id, User.first_name, User.last_name, User.email).where(
    User.id.in_(bindparam("ids", expanding=True)))


def personal_names(session: Session, owner_ids) -> dict[int, str]:
    """Display names of personal collections, computed from their owners' current names."""
    ids = {i for i in owner_ids if i is not None}
    if not ids:
        return {}
    rows = session.execute(_OWNER_NAMES, {"ids": list(ids)})
    return {uid: personal_name(first, last, email) for uid, first, last, email in rows}


_PERSONAL_ROOTS = select(Collection.id, Collection.personal_owner_id).where(Collection.personal_owner_id.is_not(None))


def personal_root_ids(session: Session) -> dict[int, int]:
    """Personal collection id -> owner id, for every user."""
    return dict(session.execute(_PERSONAL_ROOTS).all())


def personal_owner(collection: Collection, roots: dict[int, int]) -> int | None:
    """The owner of the personal collection that is or contains `collection`."""
    return personal_owner_of(collection.personal_owner_id, collection.location, roots)


def personal_owner_of(owner_id: int | None, location: str | None, roots: dict[int, int]) -> int | None:
    """The owner of the personal collection that is (`owner_id`) or holds (its `location`'s first id,
    in `roots`) a collection, from its columns; None: not personal (or `roots` not read)."""
    if owner_id is not None:
        return owner_id
    ids = location_ids(location)
    return roots.get(ids[0]) if ids else None


def row_json(collection: Collection, names: dict[int, str]) -> dict:
    """A collection's stored columns; personal collections named after their owner (`names`, from
    personal_names)."""
    name = collection.name
    slug = collection.slug
    if collection.personal_owner_id is not None and collection.personal_owner_id in names:
        name = names[collection.personal_owner_id]
        slug = slugify(name)
    return {
        "id": collection.id,
        "name": name,
        "description": collection.description,
        "color": collection.color,
        "entity_id": collection.entity_id,
        "slug": slug,
        "archived": collection.archived,
        "archived_directly": collection.archived_directly,
        "archive_operation_id": collection.archive_operation_id,
        "location": collection.location,
        "personal_owner_id": collection.personal_owner_id,
        "namespace": collection.namespace,
        "authority_level": collection.authority_level,
        "type": collection.type,
        "is_sample": collection.is_sample,
        "created_at": collection.created_at,
    }


# --------------------------------------------------------------------------------------------------
# Access: core.policy.permissions answers, asked once per collection and request
# --------------------------------------------------------------------------------------------------


class Access:
    """The caller's read and write rights on collections, memoised for one service call.

    Every answer comes from core.policy.permissions. While no plugin implements the check_permission hook,
    listings use the policy's bulk id sets (two queries per request); otherwise each collection is
    asked of can_read_collection / can_write_collection, so the hook is always honoured.
    """

    def __init__(self, session: Session, user: User):
        self.session = session
        self.user = user
        self._read: dict = {}
        self._write: dict = {}
        self._readable_ids: set[int] | None | bool = False
        self._writable_ids: set[int] | None | bool = False
        self._hooked = permissions.permission_hooks_active()

    @property
    def is_admin(self) -> bool:
        return permissions.is_admin(self.user)

    def readable_ids(self) -> set[int] | None:
        """Candidate ids for SQL filters (None: no filter, the caller is an administrator)."""
        if self._readable_ids is False:
            self._readable_ids = permissions.readable_collection_ids(self.session, self.user)
        return self._readable_ids

    def _writable(self) -> set[int] | None:
        if self._writable_ids is False:
            self._writable_ids = permissions.writable_collection_ids(self.session, self.user)
        return self._writable_ids

    def can_read(self, collection_id: int | None, namespace: str | None = None) -> bool:
        key = (collection_id, normalize_namespace(namespace) if collection_id is None else None)
        if key not in self._read:
            ids = self.readable_ids() if collection_id is not None else None
            if ids is not None and collection_id not in ids:
                self._read[key] = False
            elif collection_id is not None and not self._hooked:
                self._read[key] = True
            else:
                self._read[key] = permissions.can_read_collection(self.session, self.user, collection_id,
                                                                  normalize_namespace(namespace))
        return self._read[key]

    def can_write(self, collection_id: int | None, namespace: str | None = None) -> bool:
        key = (collection_id, normalize_namespace(namespace) if collection_id is None else None)
        if key not in self._write:
            if collection_id is not None and not self._hooked:
                ids = self._writable()
                self._write[key] = ids is None or collection_id in ids
            else:
                self._write[key] = permissions.can_write_collection(self.session, self.user, collection_id,
                                                                    normalize_namespace(namespace))
        return self._write[key]


def collection_ref(session: Session, access: Access, collection: Collection | None) -> dict:
    """The `collection` an object shows it lives in: the root object, or the collection's summary."""
    return with_can_write(access, collection_summary(session, collection))


def collection_summary(session: Session, collection: Collection | None) -> dict:
    """collection_ref as every user is shown it: all but the caller's `can_write`."""
    if collection is None:
        return root_json()
    name = collection.name
    if collection.personal_owner_id is not None:
        name = personal_names(session, [collection.personal_owner_id]).get(collection.personal_owner_id, name)
    return {"id": collection.id, "name": name, "slug": collection.slug, "location": collection.location,
            "authority_level": collection.authority_level, "type": collection.type,
            "namespace": collection.namespace, "personal_owner_id": collection.personal_owner_id,
            "archived": collection.archived}


def with_can_write(access: Access, summary: dict | None) -> dict | None:
    """A collection summary (collection_summary, collection_facts) with what the caller may do in it."""
    if summary is None:
        return None
    collection_id = summary["id"] if isinstance(summary["id"], int) else None
    return {**summary, "can_write": access.can_write(collection_id)}


def collection_json(session: Session, access: Access, collection_id: int | None) -> dict | None:
    """The hydrated `collection` of an item's GET (card, timeline): collection_ref plus is_personal,
    description and entity_id; None when the collection is gone."""
    return with_can_write(access, collection_facts(session, collection_id))


def collection_facts(session: Session, collection_id: int | None) -> dict | None:
    """collection_json as every user is shown it (kept in an object's shared answer; the caller's
    can_write is laid over it with with_can_write)."""
    collection = session.get(Collection, collection_id) if collection_id is not None else None
    if collection_id is not None and collection is None:
        return None
    out = collection_summary(session, collection)
    out["is_personal"] = collection is not None and permissions.personal_owner_id(session, collection) is not None
    if collection is not None:
        out["description"] = collection.description
        out["entity_id"] = collection.entity_id
    return out


def check_target(session: Session, user: User, collection_id: int | None, namespace: str | None = None
                 ) -> Collection | None:
    """Check that `user` may put an object into a collection (None: the root of `namespace`).

    404 when the collection does not exist, 400 when it belongs to another namespace, 403 without
    write permission. Plugins saving cards, dashboards or snippets call this before writing."""
    if collection_id is None:
        check_403(permissions.can_write_collection(session, user, None, normalize_namespace(namespace)))
        return None
    collection = session.get(Collection, collection_id)
    if collection is None:
        raise NotFound()
    if normalize_namespace(collection.namespace) != normalize_namespace(namespace):
        raise Invalid({"collection_id": "A Collection in the wrong namespace was given."})
    check_403(permissions.can_write_collection(session, user, collection_id))
    return collection
