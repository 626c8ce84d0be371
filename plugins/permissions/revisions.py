"""Graph revisions: the compare-and-increment that makes a stale PUT a 409 with nothing changed."""
from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.appdb.models import PermissionsGraphRevision, PermissionsRevision, User
from core.http.errors import Conflict


def current(session: Session, graph: str) -> int:
    return session.scalar(select(PermissionsGraphRevision.revision).where(PermissionsGraphRevision.graph == graph)) or 0


def bump(session: Session, graph: str, expected: int | None, user: User, sent: dict) -> int:
    """Take the graph's next revision, first thing in the PUT's transaction.

    The UPDATE ... WHERE revision = expected is the lock: a concurrent PUT that read the same
    revision updates no row once this one commits, and gets the 409. expected None (force=true)
    skips the comparison."""
    statement = update(PermissionsGraphRevision).where(PermissionsGraphRevision.graph == graph)
    if expected is not None:
        statement = statement.where(PermissionsGraphRevision.revision == expected)
    result = session.execute(statement.values(revision=PermissionsGraphRevision.revision + 1))
    if result.rowcount != 1:
        session.rollback()
        raise Conflict()
    revision = current(session, graph)
    session.add(PermissionsRevision(graph=graph, revision=revision, after=sent, user_id=user.id))
    return revision
