"""Pydantic types for every row of the spec's notation table, each carrying Metabase's error texts.

`errors` is the one-line description Metabase puts under "errors"; `specific` are the messages
under "specific-errors", each followed by ", received: <value>". core.api turns a pydantic
ValidationError into that shape by reading this metadata off the failing field's annotation.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BeforeValidator, Field, StrictBool, WithJsonSchema


@dataclass(frozen=True)
class MbType:
    errors: str
    specific: tuple[str, ...] = ()


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value


def _bool_str(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError("not a boolean string")


def _query_bool(value: Any) -> Any:
    # Query strings carry booleans as text; Metabase accepts exactly true/false.
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def _json_str(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError("not a string")
    try:
        return json.loads(value)
    except ValueError as exc:
        raise ValueError("not valid JSON") from exc


EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: str) -> str:
    if not EMAIL_RE.match(value):
        raise ValueError("not an e-mail address")
    return value


PositiveInt = Annotated[
    int,
    Field(strict=False, gt=0),
    MbType("value must be an integer greater than zero.", ("should be a positive int",)),
]
"""int+"""

StoredPositiveInt = Annotated[
    int,
    Field(strict=False, gt=0, le=2**63 - 1),
    MbType("value must be an integer greater than zero.", ("should be a positive int",)),
]
"""int+ that an app-DB integer column can hold (ids, TTLs): larger values are a 400, not an overflow"""

IntGreaterThanOrEqualToZero = Annotated[
    int, Field(ge=0), MbType("value must be an integer greater or equal to than zero.", ("should be a non-negative int",))
]

NonBlankStr = Annotated[
    str,
    Field(strict=True),
    AfterValidator(_non_blank),
    MbType("value must be a non-blank string.", ("should be a string", "non-blank string")),
]
"""str+"""

Str = Annotated[str, Field(strict=True), MbType("value must be a string.", ("should be a string",))]
"""str"""

Bool = Annotated[
    StrictBool, BeforeValidator(_query_bool), MbType("value must be a boolean.", ("should be a boolean",))
]
"""bool (query strings may say true/false)"""

BoolStr = Annotated[
    bool,
    BeforeValidator(_bool_str),
    WithJsonSchema({"type": "string", "enum": ["true", "false"]}),
    MbType("value must be a valid boolean string ('true' or 'false').", ("should be 'true' or 'false'",)),
]
"""boolstr: exactly 'true' or 'false'; parsed to a bool"""

JsonStr = Annotated[
    Any,
    BeforeValidator(_json_str),
    WithJsonSchema({"type": "string", "contentMediaType": "application/json"}),
    MbType("value must be a valid JSON string.", ("should be a valid JSON string",)),
]
"""jsonstr: a string holding JSON; parsed to its value"""

def parse_temporal(value: str) -> "dt.datetime":
    """An ISO-8601 date or date-time (also "YYYY-MM" and "YYYY", as Metabase's parser takes) as an
    aware datetime; text without an offset is read as UTC, a bare date as its midnight."""
    text = value.strip()
    if re.fullmatch(r"\d{4}", text):
        text += "-01-01"
    elif re.fullmatch(r"\d{4}-\d{2}", text):
        text += "-01"
    parsed = dt.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.astimezone(dt.timezone.utc)


def _temporal(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError("not a string")
    try:
        parse_temporal(value)
    except (ValueError, OverflowError) as exc:  # OverflowError: beyond datetime's range once in UTC
        raise ValueError("not a date string") from exc
    return value


TemporalStr = Annotated[
    str,
    BeforeValidator(_temporal),
    WithJsonSchema({"type": "string", "format": "date-time"}),
    MbType("value must be a valid date string", ("should be a valid date string",)),
]
"""date string: ISO-8601 date or date-time text, kept as text (parse it with parse_temporal)"""

Map = Annotated[dict[str, Any], MbType("Value must be a map.", ("should be a map",))]
"""map"""

Email = Annotated[
    str,
    Field(strict=True),
    AfterValidator(_email),
    MbType("value must be a valid email address.", ("should be a valid email address",)),
]


def Enum(*values: str, nullable: bool = False):  # noqa: N802 - reads like a type in declarations
    """An enum of strings, described as Metabase describes enums ("enum of a, b")."""
    text = ("nullable " if nullable else "") + "enum of " + ", ".join(values)
    quoted = " or ".join(f'"{v}"' for v in values)
    literal = Literal[values]  # type: ignore[valid-type]
    return Annotated[literal | None if nullable else literal, MbType(text, (f"should be either {quoted}",))]


# --------------------------------------------------------------------------------------------------
# Reading the metadata back, for error messages
# --------------------------------------------------------------------------------------------------


def mb_type(annotation: Any) -> tuple[MbType | None, bool]:
    """The MbType of an annotation and whether it is nullable (X?)."""
    nullable = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            for meta in annotation.__metadata__:
                if isinstance(meta, MbType):
                    return meta, nullable
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            nullable = nullable or len(args) < len(typing.get_args(annotation))
            if len(args) == 1:
                annotation = args[0]
                continue
            return None, nullable
        return None, nullable


def field_type(info: Any) -> tuple[MbType | None, bool]:
    """The MbType of a pydantic FieldInfo: pydantic moves top-level Annotated metadata to .metadata."""
    meta, nullable = mb_type(info.annotation)
    for item in getattr(info, "metadata", ()):
        if isinstance(item, MbType):
            return item, nullable
    return meta, nullable


def describe(info: Any) -> str:
    meta, nullable = field_type(info)
    if meta is None:
        return "value is not valid."
    if nullable and not meta.errors.startswith("nullable"):
        return "nullable " + meta.errors
    return meta.errors


def edn(value: Any) -> str:
    """A value written the way Metabase's messages print it (EDN): nil, true, "text", [1 2]."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(edn(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f":{k} {edn(v)}" for k, v in value.items()) + "}"
    return str(value)


def specific(info: Any, value: Any, missing: bool) -> list[str]:
    meta, _ = field_type(info)
    received = edn(None if missing else value)
    if meta is None or not meta.specific:
        head = "missing required key" if missing else "invalid value"
        return [f"{head}, received: {received}"]
    return [f"{text}, received: {received}" for text in meta.specific]
