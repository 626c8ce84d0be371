"""Request models of /api/field."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from core.http.api import Params
from core.http.types import (
    Bool,
    BoolStr,
    Enum,
    Map,
    MbType,
    NameStr,
    NonBlankDescriptionStr,
    NonBlankStr,
    StoredPositiveInt,
)
from core.sync.semantic_types import valid_coercion, valid_semantic_type


def _value_pairs(value: Any) -> list:
    if not isinstance(value, list):
        raise ValueError("not a list")
    for pair in value:
        if not isinstance(pair, list) or len(pair) not in (1, 2):
            raise ValueError("not a value pair")
        if len(pair) == 2 and (not isinstance(pair[1], str) or not pair[1].strip()):
            raise ValueError("the human-readable value must be a non-blank string")
    return value


def _nfc_path(value: Any) -> Any:
    if value is not None and (not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value)):
        raise ValueError("not a path")
    return value


SemanticType = Annotated[
    str | None, BeforeValidator(valid_semantic_type),
    MbType("value must be a valid semantic type (keyword or string) or a valid relation type (keyword or string).",
           ("should be a valid semantic or relation type",)),
]
CoercionStrategy = Annotated[
    str | None, BeforeValidator(valid_coercion),
    MbType("value must be a valid coercion strategy (keyword or string).", ("should be a valid coercion strategy",)),
]
ValuePairs = Annotated[
    Any, AfterValidator(_value_pairs),
    MbType("value must be a list of value pairs: [value] or [value, human-readable name].",
           ("should be a sequence of [value] or [value, non-blank string]",)),
]
NfcPath = Annotated[Any, AfterValidator(_nfc_path),
                    MbType("nullable sequence of value must be a non-blank string.", ("should be a sequence of non-blank strings",))]


class FieldId(Params):
    id: StoredPositiveInt


class SearchPath(Params):
    id: StoredPositiveInt
    search_id: StoredPositiveInt


class RemappingPath(Params):
    id: StoredPositiveInt
    remapped_id: StoredPositiveInt


class ValueQuery(Params):
    value: NonBlankStr


class SearchQuery(Params):
    value: NonBlankStr
    limit: StoredPositiveInt | None = None


class EditableQuery(Params):
    include_editable_data_model: BoolStr | None = None


class FieldUpdate(Params):
    display_name: NameStr | None = None
    description: NonBlankDescriptionStr | None = None
    caveats: NonBlankStr | None = None
    points_of_interest: NonBlankStr | None = None
    semantic_type: SemanticType = None
    coercion_strategy: CoercionStrategy = None
    visibility_type: Enum("retired", "sensitive", "normal", "hidden", "details-only", nullable=True) = None
    has_field_values: Enum("auto-list", "list", "search", "none", nullable=True) = None
    settings: Map | None = None
    fk_target_field_id: StoredPositiveInt | None = None
    nfc_path: NfcPath = None
    json_unfolding: Bool | None = None


class NewDimension(Params):
    type: Enum("internal", "external")
    name: NonBlankStr
    human_readable_field_id: StoredPositiveInt | None = None


class NewValues(Params):
    values: ValuePairs
