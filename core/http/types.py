"""Pydantic types for every row of the spec's notation table, each carrying Metabase's error texts.

`errors` is the one-line description Metabase puts under "errors"; `specific` are the messages
under "specific-errors", each followed by ", received: <value>". core.http.api turns a pydantic
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
    # The texts for one kind of failure (a pydantic error type such as "string_too_long"), when it
    # needs saying apart from the type's usual texts, which stay Metabase's.
    when: tuple[tuple[str, "MbType"], ...] = ()

    def for_error(self, error_type: str | None) -> "MbType":
        return dict(self.when).get(error_type, self)


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
    from .jsontext import JsonTextError, loads

    try:
        return loads(value)
    except JsonTextError as exc:
        raise ValueError("not valid JSON") from exc


EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: str) -> str:
    if not EMAIL_RE.match(value):
        raise ValueError("not an e-mail address")
    return value


BIGINT_MAX = 2**63 - 1
"""The largest value an app-DB integer column (BIGINT) holds: every integer type below stops there, so
a larger number is a 400 (404 for an id in a path, see core.http.api), never an overflow in the driver."""

PositiveInt = Annotated[
    int,
    Field(strict=False, gt=0, le=BIGINT_MAX),
    MbType("value must be an integer greater than zero.", ("should be a positive int",)),
]
"""int+ (bounded to BIGINT)"""

Int = Annotated[
    int,
    Field(strict=False, ge=-BIGINT_MAX - 1, le=BIGINT_MAX),
    MbType("value must be an integer.", ("should be an int",)),
]
"""int (bounded to BIGINT; negative values too, e.g. the saved-questions database -1337)"""

StoredPositiveInt = PositiveInt
"""int+ that an app-DB integer column can hold: PositiveInt itself, now that it is bounded"""

IntGreaterThanOrEqualToZero = Annotated[
    int, Field(ge=0, le=BIGINT_MAX),
    MbType("value must be an integer greater or equal to than zero.", ("should be a non-negative int",))
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

NAME_MAX = 254
DESCRIPTION_MAX = 65536


def _too_long(limit: int, base: str) -> tuple[tuple[str, MbType], ...]:
    return (("string_too_long", MbType(f"{base} of at most {limit} characters.",
                                       (f"should be at most {limit} characters",))),)


NameStr = Annotated[
    str,
    Field(strict=True, max_length=NAME_MAX),
    AfterValidator(_non_blank),
    MbType("value must be a non-blank string.", ("should be a string", "non-blank string"),
           _too_long(NAME_MAX, "value must be a non-blank string")),
]
"""str+ of at most 254 characters: the name of a stored object (Metabase's name columns are
VARCHAR(254)), so a name cannot be made large enough to burden every listing that shows it"""

DescriptionStr = Annotated[
    str,
    Field(strict=True, max_length=DESCRIPTION_MAX),
    MbType("value must be a string.", ("should be a string",), _too_long(DESCRIPTION_MAX, "value must be a string")),
]
"""str of at most 64 Ki characters: descriptions are TEXT in Metabase, unbounded there; this bound
keeps a description an annotation and not a payload served to every reader"""

NonBlankDescriptionStr = Annotated[
    str,
    Field(strict=True, max_length=DESCRIPTION_MAX),
    AfterValidator(_non_blank),
    MbType("value must be a non-blank string.", ("should be a string", "non-blank string"),
           _too_long(DESCRIPTION_MAX, "value must be a non-blank string")),
]
"""str+ of at most 64 Ki characters (the descriptions Metabase declares non-blank: collections, fields)"""

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


def describe(info: Any, error_type: str | None = None) -> str:
    meta, nullable = field_type(info)
    if meta is None:
        return "value is not valid."
    meta = meta.for_error(error_type)
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


def specific(info: Any, value: Any, missing: bool, error_type: str | None = None) -> list[str]:
    meta, _ = field_type(info)
    meta = meta.for_error(error_type) if meta is not None else None
    if error_type == "string_too_long" and isinstance(value, str):
        # Echoing a huge value back would make the error as large as the refused request.
        received = f"{edn(value[:40])[:-1]}...\" ({len(value)} characters)"
    else:
        received = edn(None if missing else value)
    if meta is None or not meta.specific:
        head = "missing required key" if missing else "invalid value"
        return [f"{head}, received: {received}"]
    return [f"{text}, received: {received}" for text in meta.specific]
