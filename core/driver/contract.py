"""The driver contract: what a database engine plugin declares (engine, names, features, the DBAPI
modules it needs) and its connection form, the pydantic Details model that also yields Metabase's
connection properties. Unknown detail keys are refused: a detail never reaches a driver unchecked.
"""
from __future__ import annotations

import importlib.util
import typing
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

SECRET_MASK = "**MetabasePass**"

# Keys the Metabase frontend sends with every details form. They carry no connection setting, so
# they are accepted and dropped. SSH tunnels and client certificates are not supported: switched
# on, they are refused rather than ignored.
UI_ONLY_KEYS = ("advanced-options", "let-user-control-scheduling", "schedules", "refingerprint", "json-unfolding")
OFF_ONLY_KEYS = ("tunnel-enabled", "ssl-use-client-auth")


class Details(BaseModel):
    """Connection details. Unknown keys are refused: a detail never reaches a driver unchecked."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_ui_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if k not in UI_ONLY_KEYS}
        for key in OFF_ONLY_KEYS:
            if data.pop(key, False):
                raise ValueError(f"{key} is not supported by Tessera")
        if data.get("schema-filters-type") in ("all", None):
            data.pop("schema-filters-type", None)
        return data

    def secret_keys(self) -> list[str]:
        return [info.alias or name for name, info in type(self).model_fields.items()
                if SecretStr in (typing.get_args(info.annotation) or (info.annotation,))]

    def plain(self) -> dict:
        """The details as stored: JSON-able, secrets revealed, only keys that were set or defaulted."""
        out = {}
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            out[info.alias or name] = value
        return out


def _safe_name(value: str | None) -> str | None:
    """A host, database or user name that libpq/MySQL cannot read as a socket path or an option string."""
    if value is None:
        return value
    if any(ch in value for ch in "\x00\r\n\t ,;=?") or value.startswith(("/", "@", "-")):
        raise ValueError("must be a plain name (no sockets, lists, options or URLs)")
    return value


class NetworkDetails(Details):
    """host/port/dbname/user/password/ssl, the fields of Metabase's server engines."""

    host: str = Field("localhost", title="Host", json_schema_extra={"placeholder": "db.example.com"})
    port: int | None = Field(None, title="Port", ge=1, le=65535)
    dbname: str = Field(title="Database name", json_schema_extra={"placeholder": "analytics"})
    user: str = Field(title="Username", json_schema_extra={"placeholder": "tessera_reader"},
                      description="Use a read-only role: superusers and roles that can read or write the "
                                  "server's files are refused.")
    password: SecretStr | None = Field(None, title="Password")
    ssl: bool = Field(False, title="Use a secure connection (SSL)")

    _check_names = field_validator("host", "dbname", "user")(_safe_name)


class FileDetails(Details):
    """A database file on the Tessera host; the path rules are in `SQLDriver.check_details`."""

    # The name of the path field (Metabase calls it "db" for SQLite); it is also its JSON key.
    file_field: ClassVar[str] = "db"

    def path(self) -> str:
        return getattr(self, self.file_field)


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
    # Metabase's driver source: "official" for built-ins, "community" or "partner" for others.
    source_type: ClassVar[str] = "official"

    @classmethod
    def available(cls) -> bool:
        """False when the DBAPI package is not installed: the driver is then hidden, not an error."""
        try:
            return all(importlib.util.find_spec(module) is not None for module in cls.dbapi_modules)
        except (ImportError, ValueError):  # a parent package missing, or a module blocked in sys.modules
            return False

    @classmethod
    def accelerations(cls) -> dict[str, bool]:
        """Optional native speed-ups, each named with whether this process uses it (a C extension that was
        built, say); `tessera run` names them in its start line. Most drivers have none."""
        return {}

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
            "source": {"type": cls.source_type, "contact": None},
        }
