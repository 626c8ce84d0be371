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


# --------------------------------------------------------------------------------------------------
# What introspection returns (sync turns these into Table and Field rows)
# --------------------------------------------------------------------------------------------------

from dataclasses import dataclass  # noqa: E402

from sqlalchemy import inspect  # noqa: E402
from sqlalchemy.engine import URL, Engine  # noqa: E402


@dataclass(frozen=True)
class TableMeta:
    name: str
    schema: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class FieldMeta:
    name: str
    database_type: str
    base_type: str
    position: int
    pk: bool = False
    required: bool = False
    auto_increment: bool = False
    description: str | None = None


@dataclass(frozen=True)
class FKMeta:
    column: str
    target_table: str
    target_column: str
    target_schema: str | None = None


from .query.dialect import QueryDialect  # noqa: E402


class SQLDriver(QueryDialect, Driver):
    """A driver for an engine SQLAlchemy speaks. Subclasses declare; they override only what differs.

    The AST methods compiled MBQL needs (truncate_temporal, extract_temporal, date_add, ...) come
    from core.query.dialect.QueryDialect; a driver overrides those its engine needs differently."""

    # (lower-cased database type prefix, Metabase base type), first match wins.
    type_map: ClassVar[tuple[tuple[str, str], ...]] = ()

    @classmethod
    def url(cls, details: Details) -> URL:
        """The SQLAlchemy URL, built field by field with URL.create: a client never supplies a URL."""
        raise NotImplementedError(f"{cls.__name__} must say how to build its URL")

    @classmethod
    def engine_options(cls, details: Details) -> dict:
        return {}

    @classmethod
    def base_type(cls, database_type: str) -> str:
        lowered = database_type.lower()
        for prefix, base in cls.type_map:
            if lowered.startswith(prefix):
                return base
        return "type/*"

    @classmethod
    def describe_tables(cls, engine: Engine) -> list[TableMeta]:
        inspector = inspect(engine)
        schemas = cls.syncable_schemas(engine)
        tables = []
        for schema in schemas:
            for name in inspector.get_table_names(schema=schema) + inspector.get_view_names(schema=schema):
                tables.append(TableMeta(name=name, schema=schema))
        return tables

    @classmethod
    def syncable_schemas(cls, engine: Engine) -> list[str | None]:
        return [None]

    @classmethod
    def describe_fields(cls, engine: Engine, table: TableMeta) -> list[FieldMeta]:
        inspector = inspect(engine)
        pk = set(inspector.get_pk_constraint(table.name, schema=table.schema).get("constrained_columns") or ())
        fields = []
        for position, column in enumerate(inspector.get_columns(table.name, schema=table.schema)):
            database_type = str(column["type"])
            fields.append(FieldMeta(
                name=column["name"], database_type=database_type, base_type=cls.base_type(database_type),
                position=position, pk=column["name"] in pk, required=not column.get("nullable", True),
                auto_increment=bool(column.get("autoincrement") is True), description=column.get("comment"),
            ))
        return fields

    @classmethod
    def describe_fks(cls, engine: Engine, table: TableMeta) -> list[FKMeta]:
        inspector = inspect(engine)
        fks = []
        for fk in inspector.get_foreign_keys(table.name, schema=table.schema):
            for column, target in zip(fk["constrained_columns"], fk["referred_columns"]):
                fks.append(FKMeta(column=column, target_table=fk["referred_table"], target_column=target,
                                  target_schema=fk.get("referred_schema")))
        return fks
