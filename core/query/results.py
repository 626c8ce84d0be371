"""Results in Metabase's envelope: columns of native results, cell values as JSON wants them, and the
completed and failed bodies of POST /api/dataset (and of every endpoint that runs a query).

One failure status everywhere: FAILED_STATUS (400, as current Metabase sends for a failed query);
success is 202 (SUCCESS_STATUS), as Metabase's streaming responses are.
"""
from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any, Iterable

SUCCESS_STATUS = 202
FAILED_STATUS = 400
JS_MAX_SAFE_INT = 2**53 - 1

_PY_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "type/Boolean"),
    (int, "type/Integer"),
    (float, "type/Float"),
    (decimal.Decimal, "type/Decimal"),
    (dt.datetime, "type/DateTime"),
    (dt.date, "type/Date"),
    (dt.time, "type/Time"),
    (str, "type/Text"),
    (uuid.UUID, "type/UUID"),
    (bytes, "type/*"),
)


def python_base_type(value: Any) -> str | None:
    for kind, base in _PY_TYPES:
        if isinstance(value, kind):
            if kind is dt.datetime and value.tzinfo is not None:
                return "type/DateTimeWithLocalTZ"
            return base
    return None


def infer_base_types(columns: list[dict], rows: Iterable[tuple], sample: int = 100) -> None:
    """Engines that report no column type (SQLite) get one from the first non-null values."""
    unknown = [i for i, c in enumerate(columns) if c.get("base_type") in (None, "", "type/*")]
    if not unknown:
        return
    found: dict[int, str] = {}
    for n, row in enumerate(rows):
        if n >= sample or len(found) == len(unknown):
            break
        for i in unknown:
            if i not in found and i < len(row) and row[i] is not None:
                base = python_base_type(row[i])
                if base:
                    found[i] = base
    for i, base in found.items():
        columns[i]["base_type"] = base
        columns[i]["effective_type"] = base
        if isinstance(columns[i].get("field_ref"), list) and isinstance(columns[i]["field_ref"][-1], dict):
            columns[i]["field_ref"][-1]["base-type"] = base


def native_columns(meta: list) -> list[dict]:
    """Result columns of a native query, as Metabase describes them (source "native")."""
    cols = []
    for column in meta:
        name = column.name
        base = column.base_type or "type/*"
        cols.append({
            "name": name,
            "display_name": name,
            "base_type": base,
            "effective_type": base,
            "semantic_type": None,
            "database_type": column.database_type or None,
            "field_ref": ["field", name, {"base-type": base}],
            "source": "native",
        })
    return cols


def normalise_column(column: Any) -> dict:
    """A compiler column (dict or object) with every key clients rely on present."""
    data = dict(column) if isinstance(column, dict) else {k: v for k, v in vars(column).items() if not k.startswith("_")}
    base = data.get("base_type") or "type/*"
    data.setdefault("display_name", data.get("name"))
    data["base_type"] = base
    data.setdefault("effective_type", base)
    data.setdefault("semantic_type", None)
    data.setdefault("source", "fields")
    return data


def json_value(value: Any, js_int_to_string: bool = True) -> Any:
    """A cell as the JSON body carries it: big integers as strings (JavaScript loses them)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if js_int_to_string and (value > JS_MAX_SAFE_INT or value < -JS_MAX_SAFE_INT):
            return str(value)
        return value
    if isinstance(value, decimal.Decimal):
        return float(value) if value % 1 else int(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def json_rows(rows: Iterable[tuple], js_int_to_string: bool = True) -> list[list]:
    simple = (str, float, type(None), bool)
    out = []
    for row in rows:
        out.append([v if isinstance(v, simple) else json_value(v, js_int_to_string) for v in row])
    return out


def results_metadata(cols: list[dict]) -> dict:
    keys = ("name", "display_name", "base_type", "effective_type", "semantic_type", "field_ref", "id",
            "table_id", "unit", "fingerprint", "description", "coercion_strategy", "visibility_type", "settings")
    return {"columns": [{k: c.get(k) for k in keys if k in c or k in ("semantic_type", "fingerprint")} for c in cols]}


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


TEMPORAL_TYPES = frozenset({"type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"})


def iso_text_datetimes(cols: list[dict], rows: list[list]) -> None:
    """Datetimes an engine keeps as text (SQLite's "2024-01-05 13:45:00") in the ISO-8601 form the
    other engines' values take ("2024-01-05T13:45:00"), in place."""
    indexes = [i for i, c in enumerate(cols) if (c.get("effective_type") or c.get("base_type")) in TEMPORAL_TYPES]
    if not indexes:
        return
    for row in rows:
        for i in indexes:
            value = row[i]
            if type(value) is str and len(value) >= 19 and value[10] == " ":
                row[i] = value[:10] + "T" + value[11:]
