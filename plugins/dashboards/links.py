"""How one field's table reaches another's through the foreign keys the data model knows: the joins
a linked-filter query adds (dashboard filter values restricted by other filters) and the answer of
GET /api/dashboard/params/valid-filter-fields, which are the same question."""
from __future__ import annotations

from collections import deque

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from core.appdb.models import Field, Table, User
from core.query import access

MAX_HOPS = 3  # joins a linked filter may add; farther tables are not offered


def fk_edges(session: Session, database_id: int) -> list[tuple[int, int, int, int]]:
    """(fk table, fk field, target table, target field) for every foreign key of the database."""
    target = aliased(Field)
    rows = session.execute(
        select(Field.table_id, Field.id, target.table_id, target.id)
        .join(target, target.id == Field.fk_target_field_id)
        .join(Table, Table.id == Field.table_id)
        .where(Table.db_id == database_id, Field.active.is_(True), target.active.is_(True)))
    return [tuple(r) for r in rows]


def path(edges: list[tuple[int, int, int, int]], start: int, goal: int) -> list[tuple[int, int, int]] | None:
    """The shortest chain of joins from table `start` to table `goal`, each step (next table, field on
    the side already joined, field on the next table); [] for the same table, None when unreachable."""
    if start == goal:
        return []
    steps: dict[int, list[tuple[int, int, int]]] = {}
    for fk_table, fk_field, target_table, target_field in edges:
        steps.setdefault(fk_table, []).append((target_table, fk_field, target_field))
        steps.setdefault(target_table, []).append((fk_table, target_field, fk_field))
    seen = {start: []}
    queue = deque([start])
    while queue:
        table = queue.popleft()
        if len(seen[table]) >= MAX_HOPS:
            continue
        for nxt, here, there in steps.get(table, ()):
            if nxt in seen:
                continue
            seen[nxt] = seen[table] + [(nxt, here, there)]
            if nxt == goal:
                return seen[nxt]
            queue.append(nxt)
    return None


def joins(chain: list[tuple[int, int, int]], prefix: str) -> tuple[list[dict], dict | None]:
    """The MBQL joins for a chain from `path`, and the ref options that name the last joined table."""
    out, previous = [], None
    for i, (table_id, here, there) in enumerate(chain):
        alias = f"{prefix}{i}"
        out.append({"source-table": table_id, "alias": alias, "fields": "none",
                    "condition": ["=", ["field", here, previous], ["field", there, {"join-alias": alias}]]})
        previous = {"join-alias": alias}
    return out, previous


def valid_filter_fields(session: Session, user: User, filtered: list[int], filtering: list[int]) -> dict[str, list[int]]:
    """For each filtered field, the filtering fields a linked-filter query can reach; only fields whose
    data the caller may see are considered (the others get, or appear in, no list)."""
    ids = access.readable_field_ids(session, user, set(filtered) | set(filtering))
    rows = session.execute(select(Field.id, Field.table_id, Table.db_id).join(Table, Table.id == Field.table_id)
                           .where(Field.id.in_(ids))).all() if ids else []
    where = {fid: (table_id, db_id) for fid, table_id, db_id in rows}
    edges_of: dict[int, list] = {}
    out: dict[str, list[int]] = {}
    for fid in filtered:
        usable = []
        if fid in where:
            table_id, db_id = where[fid]
            if db_id not in edges_of:
                edges_of[db_id] = fk_edges(session, db_id)
            for other in filtering:
                if other in where and where[other][1] == db_id \
                        and path(edges_of[db_id], table_id, where[other][0]) is not None:
                    usable.append(other)
        out[str(fid)] = usable
    return out
