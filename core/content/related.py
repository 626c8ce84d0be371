"""Related entities: Metabase's recommendations shown next to a card (or an ad-hoc query), a table,
a field, a legacy metric and a segment (src/metabase/related.clj, the version with legacy metrics
that API-SPEC follows).

Similarity compares the context-bearing clauses (field, metric and segment references) of two
definitions: shared clauses over the size of the smaller set. Lists are an "interesting mix": the
three best matches, then two picked at random from the rest. Everything returned is filtered for
the caller: cards and collections by collection read permission, tables and fields by table read
(permissions.can_read_table), hidden, inactive and archived things never. "metrics" are the table's legacy metrics, then its
metric cards; dashboards come from the dashboard_cards / visible_dashboards hooks, so
without a dashboards plugin the dashboard keys are empty, as Metabase's are without dashboards.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Collection, Field, LegacyMetric, Revision, Segment, Table, User
from core.content import segments
from core.http.errors import Invalid
from core.policy import permissions
from core.query import macros
from core.query.mbql import normalize

from .cards import base_json, query_fields
from .collections import Access, personal_names
from .collections import row_json as collection_row_json
from .metadata import field_json, table_json

MAX_BEST = 3
MAX_SERENDIPITY = 2
MAX_MATCHES = MAX_BEST + MAX_SERENDIPITY
CONTEXT_HEADS = ("field", "metric", "segment")


# --------------------------------------------------------------------------------------------------
# Definitions and similarity
# --------------------------------------------------------------------------------------------------


def _forms(clauses: Any) -> set[str]:
    """Every context-bearing clause inside `clauses`, at any depth, as a comparable key."""
    found: set[str] = set()
    pending = [clauses]
    while pending:
        value = pending.pop()
        if isinstance(value, (list, tuple)):
            if value and isinstance(value[0], str) and value[0].lower() in CONTEXT_HEADS:
                found.add(json.dumps(value, sort_keys=True, default=str))
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    return found


def query_forms(dataset_query: Any) -> set[str]:
    """A card's definition: breakouts, aggregations, expressions and fields of its last stage. A
    query that cannot be read (or a native one) has none."""
    try:
        stage = normalize(dataset_query).stages[-1]
    except (Invalid, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return set()
    return _forms([stage.breakouts, stage.aggregations, list(stage.expressions.values()), stage.fields or []])


def definition_stage(session: Session, model_row) -> Any:
    """The normalised stage of a segment's or legacy metric's definition, None when unreadable."""
    try:
        return macros.definition_stage(session, model_row.definition, model_row.table_id)
    except (Invalid, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return None


def definition_forms(session: Session, model_row) -> set[str]:
    """A legacy metric's definition (aggregation and filter) or a segment's (filter)."""
    stage = definition_stage(session, model_row)
    if stage is None:
        return set()
    parts = [stage.filters] if isinstance(model_row, Segment) else [stage.aggregations, stage.filters]
    return _forms(parts)


def similarity(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(min(len(a), len(b)), 1)


@dataclass
class Candidate:
    """Something that can be recommended: its JSON, its definition and its identity."""

    key: tuple[str, int]
    json: dict
    forms: set[str]


def rank(reference: set[str], candidates: list[Candidate], exclude: tuple[str, int] | None = None,
         positive: bool = False) -> list[Candidate]:
    """Candidates by similarity to `reference`, most similar first (ties keep their order); each
    result's JSON carries its `similarity`."""
    scored = []
    for candidate in candidates:
        if candidate.key == exclude:
            continue
        value = similarity(reference, candidate.forms)
        if positive and value <= 0:
            continue
        scored.append(Candidate(candidate.key, {**candidate.json, "similarity": value}, candidate.forms))
    return sorted(scored, key=lambda c: -c.json["similarity"])


def interesting_mix(matches: list, rng: random.Random | None = None) -> list:
    """The best matches, then a few others at random for variety."""
    best, rest = matches[:MAX_BEST], matches[MAX_BEST:]
    return best + (rng or random).sample(rest, min(MAX_SERENDIPITY, len(rest)))


def _json(candidates: list[Candidate]) -> list[dict]:
    return [c.json for c in candidates]


# --------------------------------------------------------------------------------------------------
# What the caller may see
# --------------------------------------------------------------------------------------------------


class Visibility:
    """Read permission answers for one recommendation, asked once per collection and table."""

    def __init__(self, session: Session, user: User):
        self.session = session
        self.user = user
        self.access = Access(session, user)
        self._tables: dict[int, bool] = {}

    def card(self, card: Card) -> bool:
        return not card.archived and self.access.can_read(card.collection_id)

    def collection(self, collection: Collection) -> bool:
        return not collection.archived and self.access.can_read(collection.id)

    def table(self, table: Table | None) -> bool:
        if table is None or not table.active or table.visibility_type not in (None, "normal"):
            return False
        if table.id not in self._tables:
            self._tables[table.id] = permissions.can_read_table(self.session, self.user, table.db_id, table.id)
        return self._tables[table.id]


def _card_candidates(vis: Visibility, cards) -> list[Candidate]:
    return [Candidate(("card", c.id), base_json(c), query_forms(c.dataset_query)) for c in cards if vis.card(c)]


def _definitions(vis: Visibility, model, table: Table | None) -> list[Candidate]:
    if table is None:
        return []
    kind = "segment" if model is Segment else "metric"
    rows = vis.session.scalars(select(model).where(model.table_id == table.id, model.archived.is_(False))
                               .order_by(model.id))
    return [Candidate((kind, r.id), segments.to_json(vis.session, r, creator=False), definition_forms(vis.session, r))
            for r in rows]


def metrics_for_table(vis: Visibility, table: Table | None) -> list[Candidate]:
    """The table's metrics the caller may read: legacy metrics, then metric cards built on it
    (`table` is one the caller may see)."""
    if table is None:
        return []
    cards = vis.session.scalars(select(Card).where(Card.table_id == table.id, Card.type == "metric",
                                                   Card.archived.is_(False)).order_by(Card.id))
    return _definitions(vis, LegacyMetric, table) + _card_candidates(vis, cards)


def segments_for_table(vis: Visibility, table: Table | None) -> list[Candidate]:
    """The table's segments (`table` is one the caller may see)."""
    return _definitions(vis, Segment, table)


def _tables_json(tables) -> list[dict]:
    return [table_json(t) for t in tables]


def _ordered_tables(session: Session, ids) -> list[Table]:
    ids = set(ids)
    if not ids:
        return []
    return list(session.scalars(select(Table).where(Table.id.in_(ids)).order_by(Table.name, Table.id)))


def linking_to(vis: Visibility, table: Table) -> list[Table]:
    """Tables this table's foreign keys point at."""
    targets = vis.session.scalars(select(Field.fk_target_field_id).where(
        Field.table_id == table.id, Field.fk_target_field_id.is_not(None), Field.active.is_(True)))
    ids = vis.session.scalars(select(Field.table_id).where(Field.id.in_(list(targets))))
    return [t for t in _ordered_tables(vis.session, ids) if vis.table(t)][:MAX_MATCHES]


def linked_from(vis: Visibility, table: Table) -> list[Table]:
    """Tables whose foreign keys point at this table."""
    own = list(vis.session.scalars(select(Field.id).where(Field.table_id == table.id, Field.active.is_(True))))
    if not own:
        return []
    ids = vis.session.scalars(select(Field.table_id).where(Field.fk_target_field_id.in_(own),
                                                           Field.active.is_(True)))
    return [t for t in _ordered_tables(vis.session, ids) if vis.table(t)][:MAX_MATCHES]


# --------------------------------------------------------------------------------------------------
# Dashboards (answered by a dashboards plugin through hooks)
# --------------------------------------------------------------------------------------------------


def _hook():
    try:
        from flask import current_app

        return current_app.extensions["tessera"].pm.hook
    except (RuntimeError, KeyError):
        return None


def _dashboard_pairs(session: Session, card_ids=None, dashboard_ids=None) -> list[tuple[int, int]]:
    hook = _hook()
    if hook is None:
        return []
    return list(hook.dashboard_cards(session=session, card_ids=card_ids, dashboard_ids=dashboard_ids) or [])


def _visible_dashboards(session: Session, user: User, ids: list[int]) -> list[dict]:
    hook = _hook()
    if hook is None or not ids:
        return []
    return list(hook.visible_dashboards(session=session, user=user, dashboard_ids=ids) or [])


def dashboard_mates(vis: Visibility, card_id: int | None) -> list[dict]:
    """Cards sharing a dashboard with the card."""
    if card_id is None:
        return []
    dashboards = list(dict.fromkeys(d for d, _ in _dashboard_pairs(vis.session, card_ids=[card_id])))
    if not dashboards:
        return []
    mates = list(dict.fromkeys(c for _, c in _dashboard_pairs(vis.session, dashboard_ids=dashboards) if c != card_id))
    cards = {c.id: c for c in vis.session.scalars(select(Card).where(Card.id.in_(mates)))} if mates else {}
    return [base_json(cards[i]) for i in mates if i in cards and vis.card(cards[i])][:MAX_MATCHES]


def recommended_dashboards(vis: Visibility, similar: list[Candidate]) -> list[dict]:
    """Dashboards holding the similar questions, then dashboards the caller edited lately."""
    edited = vis.session.scalars(select(Revision.model_id).where(Revision.model == "Dashboard",
                                                                 Revision.user_id == vis.user.id)
                                 .order_by(Revision.timestamp.desc(), Revision.id.desc()))
    recent = _visible_dashboards(vis.session, vis.user, list(dict.fromkeys(edited)))[:MAX_SERENDIPITY]
    recent_ids = {d["id"] for d in recent}
    card_ids = [c.key[1] for c in similar]
    holding: dict[int, list[int]] = {}
    for dashboard_id, card_id in (_dashboard_pairs(vis.session, card_ids=card_ids) if card_ids else []):
        holding.setdefault(card_id, []).append(dashboard_id)
    best = [d for card_id in card_ids for d in holding.get(card_id, []) if d not in recent_ids]
    return _visible_dashboards(vis.session, vis.user, list(dict.fromkeys(best)))[:MAX_BEST] + recent


# --------------------------------------------------------------------------------------------------
# Entities
# --------------------------------------------------------------------------------------------------


@dataclass
class CardLike:
    """A saved card, or an ad-hoc query (id None) seen as one."""

    id: int | None
    table_id: int | None
    dataset_query: Any

    @classmethod
    def adhoc(cls, dataset_query: dict) -> "CardLike":
        return cls(None, query_fields(dataset_query)["table_id"], dataset_query)


def _collections(vis: Visibility, similar: list[Candidate]) -> list[dict]:
    """Collections of the similar questions, one per collection, mixed."""
    ids = interesting_mix(list(dict.fromkeys(c.json["collection_id"] for c in similar)))
    ids = [i for i in ids if i is not None]
    rows = {c.id: c for c in vis.session.scalars(select(Collection).where(Collection.id.in_(ids)))} if ids else {}
    shown = [rows[i] for i in ids if i in rows and vis.collection(rows[i])]
    names = personal_names(vis.session, [c.personal_owner_id for c in shown if c.personal_owner_id])
    return [collection_row_json(c, names) for c in shown]


def _aggregations(session: Session, candidate: Candidate) -> list | None:
    try:
        if candidate.key[0] == "card":
            return normalize(candidate.json["dataset_query"]).stages[-1].aggregations
        row = session.get(LegacyMetric, candidate.key[1])
        stage = definition_stage(session, row) if row is not None else None
        return stage.aggregations if stage is not None else None
    except (Invalid, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return None


def _canonical_metric(session: Session, card: CardLike, metrics: list[Candidate]) -> dict | None:
    """The table's metric computing exactly the card's aggregation."""
    try:
        aggregations = normalize(card.dataset_query).stages[-1].aggregations
    except (Invalid, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return None
    if not aggregations:
        return None
    return next((m.json for m in metrics if _aggregations(session, m) == aggregations), None)


def for_card(session: Session, user: User, card: CardLike) -> dict:
    """GET /api/card/:id/related and POST /api/card/related."""
    vis = Visibility(session, user)
    table = session.get(Table, card.table_id) if isinstance(card.table_id, int) and 0 < card.table_id < 2**31 else None
    table = table if vis.table(table) else None
    forms = query_forms(card.dataset_query)
    similar: list[Candidate] = []
    if table is not None:
        cards = session.scalars(select(Card).where(Card.table_id == table.id, Card.type.in_(("question", "model")),
                                                   Card.archived.is_(False)).order_by(Card.id))
        similar = rank(forms, _card_candidates(vis, cards), exclude=("card", card.id), positive=True)
    metrics = metrics_for_table(vis, table)
    return {
        "table": table_json(table) if table is not None else None,
        "metrics": _json(interesting_mix(rank(forms, metrics, exclude=("card", card.id)))),
        "segments": _json(interesting_mix(rank(forms, segments_for_table(vis, table)))),
        "dashboard-mates": dashboard_mates(vis, card.id),
        "similar-questions": _json(interesting_mix(similar)),
        "canonical-metric": _canonical_metric(session, card, [m for m in metrics if m.key != ("card", card.id)]),
        "dashboards": recommended_dashboards(vis, similar),
        "collections": _collections(vis, similar),
    }


def for_dashboard(session: Session, user: User, card_ids: list[int]) -> dict:
    """GET /api/dashboard/:id/related (the caller's read access to the dashboard is checked already):
    questions similar to its cards (`card_ids`, in dashcard order) that are not on it, mixed."""
    vis = Visibility(session, user)
    own = set(card_ids)
    cards = {c.id: c for c in session.scalars(select(Card).where(Card.id.in_(own)))} if own else {}
    found: dict[tuple[str, int], Candidate] = {}
    for card_id in card_ids:
        card = cards.get(card_id)
        table = session.get(Table, card.table_id) if card is not None and isinstance(card.table_id, int) else None
        if table is None or not vis.table(table):
            continue
        others = session.scalars(select(Card).where(Card.table_id == table.id, Card.type.in_(("question", "model")),
                                                    Card.archived.is_(False)).order_by(Card.id))
        for candidate in rank(query_forms(card.dataset_query), _card_candidates(vis, others), positive=True):
            if candidate.key[1] not in own:
                found.setdefault(candidate.key, candidate)
    return {"cards": _json(interesting_mix(list(found.values())))}


def for_table(session: Session, user: User, table: Table) -> dict:
    """GET /api/table/:id/related (the caller's read access to `table` is checked already)."""
    vis = Visibility(session, user)
    to, from_ = linking_to(vis, table), linked_from(vis, table)
    linked = {t.id for t in to} | {t.id for t in from_} | {table.id}
    schema = Table.schema.is_(None) if table.schema is None else Table.schema == table.schema
    others = session.scalars(select(Table).where(Table.db_id == table.db_id, schema, Table.active.is_(True),
                                                 Table.visibility_type.is_(None)).order_by(Table.name, Table.id))
    return {
        "segments": _json(segments_for_table(vis, table)),
        "metrics": _json(metrics_for_table(vis, table)),
        "linking-to": _tables_json(to),
        "linked-from": _tables_json(from_),
        "tables": _tables_json(interesting_mix([t for t in others if t.id not in linked and vis.table(t)])),
    }


def for_field(session: Session, user: User, field: Field) -> dict:
    """GET /api/field/:id/related (the caller's read access to the field's table is checked already)."""
    vis = Visibility(session, user)
    table = session.get(Table, field.table_id)
    forms = _forms([["field", field.id, {}]])
    others = session.scalars(select(Field).where(Field.table_id == table.id, Field.id != field.id,
                                                 Field.visibility_type == "normal", Field.active.is_(True))
                             .order_by(Field.database_position, Field.id))
    return {
        "table": table_json(table),
        "segments": _json(interesting_mix(rank(forms, segments_for_table(vis, table)))),
        "metrics": _json(interesting_mix(rank(forms, metrics_for_table(vis, table), positive=True))),
        "fields": [field_json(f) for f in interesting_mix(list(others))],
    }


def for_legacy_metric(session: Session, user: User, metric: LegacyMetric) -> dict:
    """GET /api/metric/:id/related (the caller's read access to the metric is checked already)."""
    vis = Visibility(session, user)
    table = session.get(Table, metric.table_id)
    forms = definition_forms(session, metric)
    return {
        "table": table_json(table),
        "metrics": _json(interesting_mix(rank(forms, metrics_for_table(vis, table), exclude=("metric", metric.id)))),
        "segments": _json(interesting_mix(rank(forms, segments_for_table(vis, table)))),
    }


def for_segment(session: Session, user: User, segment: Segment) -> dict:
    """GET /api/segment/:id/related (the caller's read access to the segment is checked already)."""
    vis = Visibility(session, user)
    table = session.get(Table, segment.table_id)
    forms = definition_forms(session, segment)
    return {
        "table": table_json(table),
        "metrics": _json(interesting_mix(rank(forms, metrics_for_table(vis, table)))),
        "segments": _json(interesting_mix(rank(forms, segments_for_table(vis, table),
                                                exclude=("segment", segment.id)))),
        "linked-from": _tables_json(linked_from(vis, table)),
    }
