"""The driver contract: what a database engine plugin declares and the few methods it may override.

A driver is a declarative class, in the manner of Superset's db_engine_specs but small: `engine`,
`display_name`, `sqlglot_dialect`, a pydantic `Details` model (which also yields Metabase's
connection properties), `features`, and the DBAPI modules it needs.
"""
from __future__ import annotations

import importlib.util
import typing
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SecretStr


class Details(BaseModel):
    """Connection details. Unknown keys are refused: a detail never reaches a driver unchecked."""

    model_config = ConfigDict(extra="forbid")


def _property_type(annotation: Any) -> str:
    args = typing.get_args(annotation)
    candidates = [a for a in args if a is not type(None)] or [annotation]
    kind = candidates[0]
    if kind is SecretStr:
        return "password"
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    return "string"


class Driver:
    engine: ClassVar[str]
    display_name: ClassVar[str]
    sqlglot_dialect: ClassVar[str]
    Details: ClassVar[type[Details]] = Details
    features: ClassVar[frozenset[str]] = frozenset()
    dbapi_modules: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def available(cls) -> bool:
        """False when the DBAPI package is not installed: the driver is then hidden, not an error."""
        return all(importlib.util.find_spec(module) is not None for module in cls.dbapi_modules)

    @classmethod
    def connection_properties(cls) -> list[dict]:
        """Metabase's `details-fields`, generated from the Details model."""
        properties = []
        for name, info in cls.Details.model_fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            prop = {
                "name": info.alias or name,
                "display-name": info.title or name.replace("-", " ").replace("_", " ").capitalize(),
                "type": extra.get("property_type") or _property_type(info.annotation),
                "required": info.is_required(),
            }
            if not info.is_required() and info.default is not None:
                prop["default"] = info.default.get_secret_value() if isinstance(info.default, SecretStr) else info.default
            if info.description:
                prop["helper-text"] = info.description
            if "placeholder" in extra:
                prop["placeholder"] = extra["placeholder"]
            if extra.get("visible_if"):
                prop["visible-if"] = extra["visible_if"]
            properties.append(prop)
        return properties

    @classmethod
    def engine_info(cls) -> dict:
        """One entry of `engines` in /api/session/properties."""
        return {
            "driver-name": cls.display_name,
            "details-fields": cls.connection_properties(),
            "superseded-by": None,
            "extra-info": None,
            "source": {"type": "official", "contact": None},
        }
