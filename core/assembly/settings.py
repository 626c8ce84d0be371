"""Settings: the registry built from every plugin's register_settings, and reading and writing values.

A value comes from the environment (TESSERA_<KEY>, read-only through the API), else the setting
table, else the definition's default. Keys are kebab-case; snake_case is accepted on the way in.
"""
from __future__ import annotations

import json
import os
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.appdb import memo, rows
from core.appdb.models import Setting
from core.http import jsontext
from core.http.errors import Invalid, NotFound

from .records import SettingDef

VISIBILITY_ORDER = {"public": 0, "authenticated": 1, "admin": 2, "internal": 3}


def normalise_key(key: str) -> str:
    return key.strip().lower().replace("_", "-")


def coerce(definition: SettingDef, value: Any) -> Any:
    """A value of the setting's type from what a client or the environment supplied."""
    if value is None:
        return None
    kind = definition.type
    try:
        if kind == "boolean":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                return value.strip().lower() == "true"
            raise ValueError
        if kind == "integer":
            if isinstance(value, bool):
                raise ValueError
            return int(value)
        if kind == "double":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if kind == "json":
            return jsontext.loads(value) if isinstance(value, str) else value
        if kind == "csv":
            return value if isinstance(value, list) else [v.strip() for v in str(value).split(",") if v.strip()]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError
        return str(value)
    except (TypeError, ValueError):
        raise Invalid({"value": f"value must be a valid {kind}."}) from None


def _immutable(values: dict) -> bool:
    return all(v is None or isinstance(v, (str, int, float, bool)) for v in values.values())


class SettingsRegistry:
    def __init__(self, definitions: dict[str, SettingDef], environ: dict | None = None):
        self.definitions = definitions
        self.environ = os.environ if environ is None else environ

    def definition(self, key: str) -> SettingDef:
        definition = self.definitions.get(normalise_key(key))
        if definition is None:
            raise NotFound(f"Unknown setting: {key}")
        return definition

    def env_value(self, definition: SettingDef) -> Any:
        if not definition.env:
            return None
        raw = self.environ.get(definition.env_name)
        return None if raw is None else coerce(definition, raw)

    def get(self, session: Session, key: str) -> Any:
        definition = self.definition(key)
        if definition.getter is not None:
            return definition.getter(session)
        return self._effective(session, definition, self._stored(session, definition))

    def _stored(self, session: Session, definition: SettingDef) -> Any:
        env = self.env_value(definition)
        if env is not None:
            return env
        row = rows.get(session, Setting, definition.key)
        if row is not None:
            return json.loads(row.value)
        return definition.default

    @staticmethod
    def _effective(session: Session, definition: SettingDef, value: Any) -> Any:
        return value if definition.effective is None else definition.effective(session, value)

    def get_many(self, session: Session, keys) -> dict[str, Any]:
        """The values of several settings, as get() would give each, with one app-DB read for all
        the stored ones. Keys no plugin declares are left out of the answer."""
        definitions = {d.key: d for d in (self.definitions.get(normalise_key(k)) for k in keys) if d is not None}
        if not any(d.getter is not None or d.effective is not None for d in definitions.values()):
            # Stored and environment values only: the decoded answer is kept while the app DB is unchanged
            # (keyed by the environment's raw values too), when it holds no value a caller could change.
            raw = tuple(self.environ.get(d.env_name) if d.env else None for d in definitions.values())
            return dict(memo.get_or_compute(session, ("setting values", tuple(definitions), raw),
                                            lambda: self._many(session, definitions), keep=_immutable, alone=True))
        return self._many(session, definitions)

    def _many(self, session: Session, definitions: dict[str, SettingDef]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        stored_keys = []
        for key, definition in definitions.items():
            if definition.getter is not None:
                out[key] = definition.getter(session)
                continue
            env = self.env_value(definition)
            if env is not None:
                out[key] = env
            else:
                stored_keys.append(key)
        # An ORM select autoflushes, so values set earlier in this session are seen, as by get().
        rows = memo.get_or_compute(session, ("settings", *stored_keys), lambda: dict(session.execute(
            select(Setting.key, Setting.value).where(Setting.key.in_(stored_keys))).all()),
            alone=True) if stored_keys else {}
        for key in stored_keys:
            out[key] = json.loads(rows[key]) if key in rows else definitions[key].default
        for key, definition in definitions.items():
            if definition.getter is None and definition.effective is not None:
                out[key] = definition.effective(session, out[key])
        return out

    def set(self, session: Session, key: str, value: Any) -> None:
        """Store a value (None deletes it, restoring the default). The caller commits."""
        definition = self.definition(key)
        if definition.getter is not None or self.env_value(definition) is not None:
            raise Invalid({"value": f"You cannot change the value of {definition.key}: it is read-only or set by the environment."})
        value = coerce(definition, value)
        if value is not None and definition.validate is not None:
            value = definition.validate(value)
        row = session.get(Setting, definition.key)
        if value is None:
            if row is not None:
                session.delete(row)
            return
        if row is None:
            session.add(Setting(key=definition.key, value=json.dumps(value)))
        else:
            row.value = json.dumps(value)
        if definition.on_change is not None:
            definition.on_change(session, self, value)

    def get_or(self, session: Session, key: str, fallback: Any = None) -> Any:
        """The value, or `fallback` when no plugin declares the setting (its owner is disabled)."""
        if normalise_key(key) not in self.definitions:
            return fallback
        return self.get(session, key)

    def readable(self, visibility: str) -> list[SettingDef]:
        """Definitions a caller whose widest visibility is `visibility` may read."""
        limit = VISIBILITY_ORDER[visibility]
        return [d for d in self.definitions.values() if VISIBILITY_ORDER[d.visibility] <= limit]

    def properties(self, session: Session, visibility: str) -> dict:
        """The flat map of /api/session/properties: every setting readable at `visibility`, a sensitive
        one (readable by admins only) masked as GET /api/setting masks it: the map goes into every
        page and client that asks, and a secret is read on purpose, by its own key. The stored values
        are read in one statement, kept while the setting table is unchanged (every page of the app and
        every client start asks for the map)."""
        shown = [d for d in self.readable(visibility) if not d.sensitive or visibility == "admin"]
        values = self._many(session, {d.key: d for d in shown})
        return {d.key: self._masked(d, values[d.key]) for d in shown}

    @staticmethod
    def _masked(definition: SettingDef, value: Any) -> Any:
        return "**********" + str(value)[-2:] if definition.sensitive and value else value

    def describe(self, session: Session, definition: SettingDef) -> dict:
        """One row of GET /api/setting."""
        env = self.env_value(definition)
        value = None if env is not None else self.get(session, definition.key)
        value = self._masked(definition, value)
        return {
            "key": definition.key,
            "value": value,
            "is_env_setting": env is not None,
            "env_name": definition.env_name,
            "description": definition.description,
            "default": f"Using value of env var ${definition.env_name}" if env is not None else definition.default,
            "type": definition.type,
            "visibility": definition.visibility,
        }
