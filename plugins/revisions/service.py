"""Finding the registered kind behind an entity name and handing the call to it; the kind's own
functions check the caller's rights and write."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly.records import Revisable
from core.http.errors import Invalid
from core.http.types import edn


def _kind(revisables: dict[str, Revisable], entity: str) -> Revisable:
    kind = revisables.get(entity)
    if kind is None:
        # Metabase's answer to a value outside its entity enum (core.http.types.Enum, with the names known now).
        names = sorted(revisables)
        quoted = " or ".join(f'"{name}"' for name in names)
        raise Invalid({"entity": f"enum of {', '.join(names)}"},
                      {"entity": [f"should be either {quoted}, received: {edn(entity)}"]})
    return kind


def revisions(session: Session, user: User, revisables: dict[str, Revisable], entity: str, entity_id: int) -> list[dict]:
    return _kind(revisables, entity).history(session, user, entity_id)


def revert(session: Session, user: User, revisables: dict[str, Revisable], entity: str, entity_id: int,
           revision_id: int) -> dict:
    return _kind(revisables, entity).revert(session, user, entity_id, revision_id)
