"""JSON of the data model: databases, tables and fields as Metabase's API shows them.

Shared by the databases, tables and fields plugins (which never import each other). Keys follow
compat/core.md section 3 and compat/clients.md section 9: every field carries fk_target_field_id,
semantic_type, has_field_values, settings, coercion_strategy and visibility_type, even when null.
"""
from __future__ import annotations

from typing import Any

from core.appdb.models import Database, Dimension, Field, Table
from core.sync.analyze import inferred_has_field_values
from core.sync.schedules import cron_to_schedule


def database_json(database: Database, driver: Any = None, details: dict | None = None) -> dict:
    """A database as GET /api/database lists it; `details` (already masked) only for its managers."""
    features = sorted(driver.features) if driver is not None else []
    data = {
        "id": database.id,
        "name": database.name,
        "description": database.description,
        "engine": database.engine,
        "features": features,
        "is_sample": database.is_sample,
        "is_full_sync": database.is_full_sync,
        "is_on_demand": database.is_on_demand,
        "is_audit": database.is_audit,
        "is_attached_dwh": False,
        "auto_run_queries": database.auto_run_queries,
        "refingerprint": database.refingerprint,
        "cache_ttl": database.cache_ttl,
        "timezone": database.timezone,
        "dbms_version": database.dbms_version,
        "metadata_sync_schedule": database.metadata_sync_schedule,
        "cache_field_values_schedule": database.cache_field_values_schedule,
        "initial_sync_status": database.initial_sync_status,
        "settings": database.settings or {},
        "caveats": database.caveats,
        "points_of_interest": database.points_of_interest,
        "creator_id": database.creator_id,
        "created_at": database.created_at,
        "updated_at": database.updated_at,
        "uploads_enabled": database.uploads_enabled,
        "uploads_schema_name": database.uploads_schema_name,
        "uploads_table_prefix": database.uploads_table_prefix,
        "can_upload": False,
        "router_database_id": None,
        "router_user_attribute": None,
        "entity_id": database.entity_id,
        "provider_name": None,
        "is_writable": None,
    }
    if details is not None:
        data["details"] = details
    return data


def schedules_json(database: Database) -> dict:
    return {
        "metadata_sync": cron_to_schedule(database.metadata_sync_schedule),
        "cache_field_values": cron_to_schedule(database.cache_field_values_schedule),
    }


def table_json(table: Table, *, schema_as_string: bool = False) -> dict:
    schema = table.schema
    if schema_as_string and schema is None:
        schema = ""
    return {
        "id": table.id,
        "db_id": table.db_id,
        "name": table.name,
        "display_name": table.display_name,
        "description": table.description,
        "schema": schema,
        "entity_type": table.entity_type,
        "active": table.active,
        "visibility_type": table.visibility_type,
        "initial_sync_status": table.initial_sync_status,
        "field_order": table.field_order,
        "caveats": table.caveats,
        "points_of_interest": table.points_of_interest,
        "show_in_getting_started": table.show_in_getting_started,
        "is_upload": table.is_upload,
        "estimated_row_count": table.estimated_row_count,
        "database_require_filter": table.database_require_filter,
        "view_count": 0,
        "entity_id": table.entity_id,
        "created_at": table.created_at,
        "updated_at": table.updated_at,
    }


def field_json(field: Field) -> dict:
    return {
        "id": field.id,
        "table_id": field.table_id,
        "name": field.name,
        "display_name": field.display_name,
        "description": field.description,
        "database_type": field.database_type,
        "base_type": field.base_type,
        "effective_type": field.effective_type or field.base_type,
        "semantic_type": field.semantic_type,
        "coercion_strategy": field.coercion_strategy,
        "fk_target_field_id": field.fk_target_field_id,
        "active": field.active,
        "visibility_type": field.visibility_type,
        "has_field_values": inferred_has_field_values(field.base_type, field.has_field_values),
        "preview_display": field.preview_display,
        "position": field.position,
        "database_position": field.database_position,
        "custom_position": field.custom_position,
        "database_is_auto_increment": field.database_is_auto_increment,
        "database_required": field.database_required,
        "database_indexed": field.database_indexed,
        "parent_id": field.parent_id,
        "nfc_path": field.nfc_path,
        "json_unfolding": field.json_unfolding,
        "settings": field.settings,
        "fingerprint": field.fingerprint,
        "fingerprint_version": field.fingerprint_version,
        "last_analyzed": field.last_analyzed,
        "caveats": field.caveats,
        "points_of_interest": field.points_of_interest,
        "entity_id": field.entity_id,
        "created_at": field.created_at,
        "updated_at": field.updated_at,
    }


def dimension_json(dimension: Dimension) -> dict:
    return {
        "id": dimension.id,
        "field_id": dimension.field_id,
        "name": dimension.name,
        "type": dimension.type,
        "human_readable_field_id": dimension.human_readable_field_id,
        "entity_id": dimension.entity_id,
        "created_at": dimension.created_at,
        "updated_at": dimension.updated_at,
    }


# Sorting as Metabase's table field_order values ask.
def ordered_fields(table: Table, fields: list[Field]) -> list[Field]:
    order = table.field_order or "database"
    if order == "alphabetical":
        return sorted(fields, key=lambda f: ((f.display_name or f.name).lower(), f.id))
    if order == "custom":
        return sorted(fields, key=lambda f: (f.custom_position, f.id))
    if order == "smart":
        def smart(f: Field):
            rank = 0 if f.semantic_type == "type/PK" else 1 if f.semantic_type == "type/Name" else 2
            return (rank, f.database_position, f.id)
        return sorted(fields, key=smart)
    return sorted(fields, key=lambda f: (f.database_position, f.id))
