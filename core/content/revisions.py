"""Revision history of content (cards, segments, legacy metrics; dashboards later): one row per saved state.

Writers call `record` (or `push`, which skips an unchanged state) in the same transaction as the
change, so a change and its revision land together. Reading is `history` (newest first, each with its
diff from the state before and a sentence describing it, as Metabase's revisions+details) and
`revert` (the entity back to a recorded state, recorded as a reversion). An entity kind says which
keys its diff shows (`Kind`). `last_edit_info` is what API responses show as `last-edit-info`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from core.appdb.models import Collection, Revision, User, utcnow
from core.http.errors import NotFound

# Metabase keeps the latest 15 revisions of each object.
MAX_REVISIONS = 15


@dataclass(frozen=True)
class Kind:
    """How one entity type's revisions read. `model` is the stored name ("Card", "Segment"), `label`
    the word in descriptions ("renamed this Segment ..."). With `diff_keys`, a diff is per key
    `{before, after}` over those keys (a first revision shows only `after`); without, it is
    Metabase's default `{before: {changed keys}, after: {changed keys}}`."""

    model: str
    label: str
    diff_keys: tuple[str, ...] | None = None
    # The kind's own phrase for a changed key (a dashboard's "added a card"), asked before the shared ones.
    describe: Callable[[str, Any, Any], str | None] | None = None


def record(session: Session, model: str, model_id: int, user_id: int | None, obj: dict, *,
           is_creation: bool = False, is_reversion: bool = False, message: str | None = None) -> Revision:
    """Add a revision holding `obj` (the serialized entity after the change); the caller commits."""
    session.execute(update(Revision).where(Revision.model == model, Revision.model_id == model_id,
                                           Revision.most_recent.is_(True)).values(most_recent=False))
    revision = Revision(model=model, model_id=model_id, user_id=user_id, object=obj, timestamp=utcnow(),
                        is_creation=is_creation, is_reversion=is_reversion, message=message, most_recent=True,
                        metabase_version=_version())
    session.add(revision)
    session.flush()
    _trim(session, model, model_id)
    return revision


def push(session: Session, model: str, model_id: int, user_id: int | None, obj: dict, *,
         is_creation: bool = False, message: str | None = None) -> Revision | None:
    """`record`, unless `obj` equals the latest recorded state (then nothing is written)."""
    previous = latest(session, model, model_id)
    if previous is not None and _canonical(previous.object) == _canonical(obj):
        return None
    return record(session, model, model_id, user_id, obj, is_creation=is_creation, message=message)


def latest(session: Session, model: str, model_id: int) -> Revision | None:
    return session.scalar(select(Revision).where(Revision.model == model, Revision.model_id == model_id)
                          .order_by(Revision.id.desc()).limit(1))


def history(session: Session, kind: Kind, model_id: int) -> list[dict]:
    """Every kept revision of the entity, newest first, with diff, description and user."""
    rows = list(session.scalars(select(Revision).where(Revision.model == kind.model, Revision.model_id == model_id)
                                .order_by(Revision.id.desc())))
    return [details(session, kind, row, rows[i + 1] if i + 1 < len(rows) else None) for i, row in enumerate(rows)]


def revert(session: Session, kind: Kind, model_id: int, revision_id: int, user_id: int | None,
           apply: Callable[[dict], None]) -> dict:
    """Put the entity back in the state of `revision_id` (`apply` writes that state onto the row) and
    record it as a reversion; returns the new revision's details. The caller commits."""
    target = session.scalar(select(Revision).where(Revision.id == revision_id, Revision.model == kind.model,
                                                   Revision.model_id == model_id))
    if target is None:
        raise NotFound()
    previous = latest(session, kind.model, model_id)
    obj = dict(target.object or {})
    apply(obj)
    new = record(session, kind.model, model_id, user_id, obj, is_reversion=True)
    return details(session, kind, new, previous)


def details(session: Session, kind: Kind, revision: Revision, previous: Revision | None) -> dict:
    """One revision as the API shows it (Metabase's add-revision-details)."""
    before = previous.object if previous is not None else None
    changes = _changes(session, kind, previous, revision)
    user = session.get(User, revision.user_id) if revision.user_id is not None else None
    return {
        "id": revision.id,
        "is_reversion": revision.is_reversion,
        "is_creation": revision.is_creation,
        "most_recent": revision.most_recent,
        "metabase_version": revision.metabase_version,
        "message": revision.message,
        "timestamp": revision.timestamp,
        "user": {"id": user.id, "first_name": user.first_name, "last_name": user.last_name,
                 "common_name": user.common_name} if user is not None else {},
        "diff": diff(kind, before, revision.object),
        "description": sentence(changes) if changes else "created a revision with no change.",
        "has_multiple_changes": len(changes) > 1,
    }


def diff(kind: Kind, before: dict | None, after: dict) -> dict | None:
    after = after or {}
    if kind.diff_keys is None:
        if before is None:
            return None
        keys = [k for k in _keys(before, after) if before.get(k) != after.get(k)]
        return {"before": {k: before[k] for k in keys if k in before} or None,
                "after": {k: after[k] for k in keys if k in after} or None}
    if before is None:
        return {k: {"after": after.get(k)} for k in kind.diff_keys}
    out = {}
    for key in kind.diff_keys:
        if before.get(key) != after.get(key):
            out[key] = {"before": before.get(key), "after": after.get(key)}
    return out


def sentence(parts: list[str]) -> str:
    """Metabase's build-sentence: "a.", "a and b.", "a, b and c."."""
    if len(parts) == 1:
        return f"{parts[0]}."
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}."
    return f"{parts[0]}, {sentence(parts[1:])}"


def _changes(session: Session, kind: Kind, previous: Revision | None, revision: Revision) -> list[str]:
    if revision.is_creation:
        return ["created this"]
    if revision.is_reversion:
        return ["reverted to an earlier version"]
    if previous is None:
        return ["modified this"]
    before, after = previous.object or {}, revision.object or {}
    out: list[str] = []
    for key in _keys(before, after):
        if before.get(key) == after.get(key):
            continue
        identifier = f"this {kind.label}" if not out else "it"
        text = kind.describe(key, before.get(key), after.get(key)) if kind.describe is not None else None
        text = text or _describe(session, key, before.get(key), after.get(key), identifier)
        if text:
            out.append(text)
    return out


def _describe(session: Session, key: str, old: Any, new: Any, identifier: str) -> str | None:
    """The phrase Metabase's diff-strings uses for one changed key (None: not worth a phrase)."""
    if key == "name":
        return f'renamed {identifier} from "{old}" to "{new}"'
    if key == "description":
        return "added a description" if old is None else "changed the description"
    if key == "archived":
        return f"trashed {identifier}" if new else f"untrashed {identifier}"
    if key == "definition":
        # Metabase has no phrase for a definition change; one is clearer than "no change".
        return "changed the definition"
    if key == "public_uuid":
        return f"made {identifier} private" if new is None else (f"made {identifier} public" if old is None else None)
    if key == "collection_id":
        def name(cid):
            if cid is None:
                return "Our analytics"
            collection = session.get(Collection, cid)
            return collection.name if collection is not None else str(cid)
        return f"moved {identifier} to {name(new)}" if old is None else \
            f"moved {identifier} from {name(old)} to {name(new)}"
    if key == "display":
        return f"changed the display from {old} to {new}"
    if key == "type":
        return "turned this to a model" if (old, new) == ("question", "model") else f"type changed from {old} to {new}"
    return {
        "enable_embedding": "enabled embedding" if new else "disabled embedding",
        "embedding_params": "changed the embedding parameters",
        "parameters": "changed the filters",
        "collection_position": "changed pin position",
        "visualization_settings": "changed the visualization settings",
        "parameter_mappings": "changed the filter mapping",
        "collection_preview": "enabled collection review" if new else "disabled collection preview",
        "dataset_query": "modified the query",
        "result_metadata": "edited the metadata",
    }.get(key)


def _keys(before: dict, after: dict) -> list[str]:
    return list(after) + [k for k in before if k not in after]


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


def _version() -> str | None:
    from core.assembly.app import METABASE_API_TAG

    return METABASE_API_TAG


def _trim(session: Session, model: str, model_id: int) -> None:
    old = list(session.scalars(select(Revision.id).where(Revision.model == model, Revision.model_id == model_id)
                               .order_by(Revision.timestamp.desc(), Revision.id.desc()).offset(MAX_REVISIONS)))
    if old:
        session.execute(delete(Revision).where(Revision.id.in_(old)))


_LAST_EDIT = (select(User.id, User.email, User.first_name, User.last_name, Revision.timestamp)
              .join(User, User.id == Revision.user_id)
              .where(Revision.id == select(func.max(Revision.id)).where(
                  Revision.model == bindparam("model"), Revision.model_id == bindparam("model_id")).scalar_subquery()))


def last_edit_info(session: Session, model: str, model_id: int) -> dict | None:
    """Who made the latest revision and when: {id, email, first_name, last_name, timestamp}. Only the
    columns it shows are read: a GET does not decode the revision's stored object."""
    row = session.execute(_LAST_EDIT, {"model": model, "model_id": model_id}).first()
    return None if row is None else _edit_info(row)


_LATEST_OF_EACH = (select(func.max(Revision.id)).where(Revision.model == bindparam("model"),
                                                       Revision.model_id.in_(bindparam("model_ids", expanding=True)))
                   .group_by(Revision.model_id))
_LAST_EDITS = (select(Revision.model_id, User.id, User.email, User.first_name, User.last_name, Revision.timestamp)
               .join(User, User.id == Revision.user_id).where(Revision.id.in_(_LATEST_OF_EACH)))


def last_edit_infos(session: Session, model: str, model_ids) -> dict[int, dict]:
    """last_edit_info of each of `model_ids` that has a revision, in one statement (a list shows one
    for every item)."""
    ids = list(dict.fromkeys(model_ids))
    if not ids:
        return {}
    return {row.model_id: _edit_info(row) for row in session.execute(_LAST_EDITS, {"model": model, "model_ids": ids})}


def _edit_info(row) -> dict:
    return {"id": row.id, "email": row.email, "first_name": row.first_name, "last_name": row.last_name,
            "timestamp": row.timestamp}
