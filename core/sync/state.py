"""What a sync knows of one database while it runs: the stored tables and fields loaded once
(TableState, FieldState), changed in memory by reading and analysis, and written back in one
transaction by core.sync.schema.
"""
from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from sqlalchemy import select

from core.appdb.models import Field, Table


def _key(schema: str | None, name: str) -> tuple[str, str]:
    return (schema or "", name)


@dataclass
class FieldState:
    """One field as it will be stored: its existing row (if any) merged with what sync found."""

    name: str
    values: dict[str, Any]
    id: int | None = None
    changed: set[str] = dc_field(default_factory=set)
    fk_target: tuple[tuple[str, str], str] | None = None
    distinct: tuple[list[Any], bool, bool] | None = None  # values, has_more_values, too many for a list

    def set(self, key: str, value: Any) -> None:
        if self.values.get(key) != value:
            self.values[key] = value
            self.changed.add(key)


@dataclass
class TableState:
    key: tuple[str, str]
    values: dict[str, Any]
    id: int | None = None
    changed: set[str] = dc_field(default_factory=set)
    fields: dict[str, FieldState] = dc_field(default_factory=dict)

    def set(self, key: str, value: Any) -> None:
        if self.values.get(key) != value:
            self.values[key] = value
            self.changed.add(key)


FIELD_COLUMNS = ("id", "table_id", "name", "display_name", "description", "database_type", "base_type",
                 "effective_type", "semantic_type", "coercion_strategy", "fk_target_field_id", "active",
                 "visibility_type", "has_field_values", "position", "database_position",
                 "database_is_auto_increment", "database_required", "fingerprint", "fingerprint_version",
                 "preview_display", "parent_id")
TABLE_COLUMNS = ("id", "schema", "name", "display_name", "description", "entity_type", "active",
                 "initial_sync_status", "estimated_row_count")


# --------------------------------------------------------------------------------------------------
# Reading the stored state
# --------------------------------------------------------------------------------------------------


def load_state(session, database_id: int) -> dict[tuple[str, str], TableState]:
    tables: dict[tuple[str, str], TableState] = {}
    by_id: dict[int, TableState] = {}
    for row in session.execute(select(*(getattr(Table, c) for c in TABLE_COLUMNS)).where(Table.db_id == database_id)):
        values = dict(zip(TABLE_COLUMNS, row))
        state = TableState(key=_key(values["schema"], values["name"]), values=values, id=values["id"])
        tables[state.key] = state
        by_id[state.id] = state
    if by_id:
        query = select(*(getattr(Field, c) for c in FIELD_COLUMNS)).join(Table, Field.table_id == Table.id).where(
            Table.db_id == database_id, Field.parent_id.is_(None))
        for row in session.execute(query):
            values = dict(zip(FIELD_COLUMNS, row))
            by_id[values["table_id"]].fields[values["name"]] = FieldState(values["name"], values, id=values["id"])
    return tables
