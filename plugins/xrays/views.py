"""/api/automagic-dashboards: x-rays (transient automatic dashboards) of tables, segments, models,
questions, ad-hoc queries and fields, their cells, rules and comparisons, and a database's candidates."""
from __future__ import annotations

from core.appdb import db
from core.http import auth
from core.http.api import Api

from . import candidates as candidates_service
from . import service
from .schemas import (
    CellComparePath,
    CellPath,
    CellRuleComparePath,
    CellRulePath,
    ComparePath,
    DatabaseId,
    EntityPath,
    RuleComparePath,
    RulePath,
    ShowQuery,
)

xray_api = Api("xrays", __name__, url_prefix="/automagic-dashboards")

BASE = "/<entity>/<entity_id_or_query>"
CELL = "/cell/<cell_query>"
RULE = "/rule/<prefix>/<rule>"
COMPARE = "/compare/<comparison_entity>/<comparison_entity_id_or_query>"


def _run(path, query: ShowQuery) -> dict:
    cell = getattr(path, "cell_query", None)
    rule = (path.prefix, path.rule) if hasattr(path, "rule") else None
    versus = (path.comparison_entity, path.comparison_entity_id_or_query) if hasattr(path, "comparison_entity") else None
    return service.xray(db.session(), auth.require_user(), path.entity, path.entity_id_or_query, cell=cell,
                        rule=rule, versus=versus, show=query.show)


@xray_api.get("/database/<id>/candidates", path=DatabaseId)
def database_candidates(path: DatabaseId):
    """The database's tables worth an x-ray, by schema, most interesting first (at most 10 per schema)."""
    return candidates_service.candidates(db.session(), auth.require_user(), path.id)


@xray_api.get(BASE, path=EntityPath, query=ShowQuery)
def xray(path: EntityPath, query: ShowQuery):
    """An automatic dashboard for the entity (table, card__N, segment, model, question, adhoc, field)."""
    return _run(path, query)


@xray_api.get(BASE + CELL, path=CellPath, query=ShowQuery)
def xray_cell(path: CellPath, query: ShowQuery):
    """The entity narrowed to the cell its base64 filter clause defines."""
    return _run(path, query)


@xray_api.get(BASE + CELL + COMPARE, path=CellComparePath, query=ShowQuery)
def xray_cell_compare(path: CellComparePath, query: ShowQuery):
    """The cell compared, card by card, with a table, segment or ad-hoc query."""
    return _run(path, query)


@xray_api.get(BASE + CELL + RULE, path=CellRulePath, query=ShowQuery)
def xray_cell_rule(path: CellRulePath, query: ShowQuery):
    """The cell analysed with the named template."""
    return _run(path, query)


@xray_api.get(BASE + CELL + RULE + COMPARE, path=CellRuleComparePath, query=ShowQuery)
def xray_cell_rule_compare(path: CellRuleComparePath, query: ShowQuery):
    """The cell, with the named template, compared with another entity."""
    return _run(path, query)


@xray_api.get(BASE + COMPARE, path=ComparePath, query=ShowQuery)
def xray_compare(path: ComparePath, query: ShowQuery):
    """The entity compared, card by card, with a table, segment or ad-hoc query."""
    return _run(path, query)


@xray_api.get(BASE + RULE, path=RulePath, query=ShowQuery)
def xray_rule(path: RulePath, query: ShowQuery):
    """The entity analysed with the named template."""
    return _run(path, query)


@xray_api.get(BASE + RULE + COMPARE, path=RuleComparePath, query=ShowQuery)
def xray_rule_compare(path: RuleComparePath, query: ShowQuery):
    """The entity, with the named template, compared with another entity."""
    return _run(path, query)
