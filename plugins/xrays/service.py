"""The x-ray service: resolve the entity, narrow it by a cell, pick the template (or the rule's),
bind it and lay out the transient dashboard, alone or compared with another entity."""
from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from core.appdb.models import Field, User
from core.http.errors import Invalid, NotFound
from core.query.mbql import normalize

from . import compare, dashboard, related, roots
from .bind import bind, choose, interpolate
from .templates import DEFAULT_MAX_CARDS, registry


def _describe(session: Session, clause) -> str:
    """A short human description of a cell's filter: "Category is Widget and Created At is 2024-03"."""
    if isinstance(clause, list) and clause and clause[0] == "and":
        return " and ".join(_describe(session, c) for c in clause[1:])
    if isinstance(clause, list) and len(clause) >= 3 and clause[0] in ("=", "!=", "<", ">", "<=", ">=", "between"):
        ref = clause[1]
        name = "a column"
        if isinstance(ref, list) and len(ref) >= 2 and ref[0] == "field":
            if isinstance(ref[1], int) and 0 < ref[1] < 2**31 and (f := session.get(Field, ref[1])) is not None:
                name = f.display_name or f.name
            elif isinstance(ref[1], str):
                name = ref[1]
        words = {"=": "is", "!=": "is not", "<": "is less than", ">": "is greater than", "<=": "is at most",
                 ">=": "is at least", "between": "is between"}[clause[0]]
        return f"{name} {words} {' and '.join(str(v) for v in clause[2:])}"
    return "the selected cell"


def _field_ids(clause) -> list:
    if isinstance(clause, list):
        if len(clause) >= 2 and clause[0] == "field" and not isinstance(clause[1], str):
            return [clause[1]]
        return [i for item in clause for i in _field_ids(item)]
    return []


def _narrow(session: Session, root: roots.Root, cell: str, clause) -> roots.Root:
    try:
        if not isinstance(clause, list) or not clause:
            raise ValueError
        normalize({"database": root.database_id, "type": "query", "query": {**root.source, "filter": clause}})
        # A cell is a value of a column of this x-ray: its own table's or one FK away.
        known = {c.id for c in root.cols if c.id is not None}
        if any(ref not in known for ref in _field_ids(clause)):
            raise ValueError
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, Invalid):
        raise Invalid({"cell-query": roots.BAD_BASE64}, {"cell-query": [roots.BAD_BASE64]}) from None
    return replace(root.narrowed(clause, cell), name=f"{root.name} where {_describe(session, clause)}")


def _limit(show) -> int | None:
    if show == "all":
        return None
    return DEFAULT_MAX_CARDS if show is None else show


def xray(session: Session, user: User, entity: str, id_or_query: str, *, cell: tuple[str, list] | None = None,
         rule: tuple[str, str] | None = None, versus: tuple[str, str] | None = None, show=None) -> dict:
    templates = registry()
    root = roots.resolve(session, user, entity, id_or_query)
    if cell is not None:
        root = _narrow(session, root, *cell)
    if rule is not None and rule not in templates:
        raise NotFound()
    try:
        template, built = choose(templates, root, rule)
    except LookupError:
        raise NotFound() from None
    bound = bind(template, root)
    params = dashboard.parameters(template, root, bound)
    limit = _limit(show)
    shown = built if limit is None else built[:limit]
    title = interpolate(template.title, root)
    transient = interpolate(template.transient_title, root)
    if cell is not None:
        title = transient = f"A closer look at {root.name}"
    if versus is not None:
        that = roots.resolve(session, user, *versus)
        cards = compare.dashcards(root, that, shown, params, user.id)
        title = transient = f"Comparison of {root.name} and {that.name}"
    else:
        cards = dashboard.layout(template, root, shown, params, user.id)
    more = f"{root.url}#show=all" if limit is not None and len(built) > limit else None
    return {"id": None, "name": title[:254], "transient_name": transient, "description": interpolate(template.description, root),
            "creator_id": user.id, "collection_id": None, "archived": False, "parameters": [p for p, _ in params],
            "dashcards": cards, "tabs": [], "transient_filters": list(root.filters) or None,
            "param_fields": dashboard.param_fields(params), "auto_apply_filters": True, "width": "fixed",
            "dashboard-template-name": f"{template.kind}/{template.name}",
            "related": related.links(session, user, root, bound), "more": more}
