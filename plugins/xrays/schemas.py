"""Request shapes of the x-ray endpoints, with Metabase's error texts (keys as Metabase names them)."""
from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from core.http import types as t
from core.http.api import Params

from .roots import BAD_BASE64, COMPARISONS, ENTITIES, decode_json
from .templates import KINDS


def _one_of(values: tuple[str, ...]):
    def check(value: str) -> str:
        if value not in values:
            raise ValueError("not allowed")
        return value
    return check


def _cell(value: str) -> tuple[str, Any]:
    return value, decode_json(value)


def _rule_name(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,99}", value):
        raise ValueError("bad rule name")
    return value


def _show(value):
    if value is None or value == "all":
        return value
    if isinstance(value, str) and value.isdigit() and len(value) < 10:
        return int(value)
    raise ValueError("bad show")


Entity = Annotated[str, AfterValidator(_one_of(ENTITIES)), t.MbType("Invalid entity type", ("Invalid entity type",))]
Comparison = Annotated[str, AfterValidator(_one_of(COMPARISONS)), t.MbType(
    'Invalid comparison entity type. Can only be one of "table", "segment", or "adhoc"',
    ('Invalid comparison entity type. Can only be one of "table", "segment", or "adhoc"',))]
CellQuery = Annotated[str, AfterValidator(_cell), t.MbType(BAD_BASE64, (BAD_BASE64,))]
Prefix = Annotated[str, AfterValidator(_one_of(KINDS)), t.MbType("invalid value for prefix", ("invalid value for prefix",))]
RuleName = Annotated[str, AfterValidator(_rule_name), t.MbType("invalid value for rule name",
                                                               ("invalid value for rule name",))]
Show = Annotated[Any, BeforeValidator(_show), t.MbType("nullable must equal all, or natural integer.",
                                                       ("should be all or a natural integer",))]
IdOrQuery = Annotated[str, t.MbType("value must be a non-blank string.", ("non-blank string",))]


class ShowQuery(Params):
    show: Show = None


class EntityPath(Params):
    entity: Entity
    entity_id_or_query: IdOrQuery = Field(alias="entity-id-or-query")


class CellPath(EntityPath):
    cell_query: CellQuery = Field(alias="cell-query")


class RulePath(EntityPath):
    prefix: Prefix
    rule: RuleName


class ComparePath(EntityPath):
    comparison_entity: Comparison = Field(alias="comparison-entity")
    comparison_entity_id_or_query: IdOrQuery = Field(alias="comparison-entity-id-or-query")


class CellRulePath(CellPath):
    prefix: Prefix
    rule: RuleName


class CellComparePath(CellPath):
    comparison_entity: Comparison = Field(alias="comparison-entity")
    comparison_entity_id_or_query: IdOrQuery = Field(alias="comparison-entity-id-or-query")


class RuleComparePath(RulePath):
    comparison_entity: Comparison = Field(alias="comparison-entity")
    comparison_entity_id_or_query: IdOrQuery = Field(alias="comparison-entity-id-or-query")


class CellRuleComparePath(CellRulePath):
    comparison_entity: Comparison = Field(alias="comparison-entity")
    comparison_entity_id_or_query: IdOrQuery = Field(alias="comparison-entity-id-or-query")


class DatabaseId(Params):
    id: t.PositiveInt
