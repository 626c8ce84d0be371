"""Results in Metabase's envelope: columns of native results, cell values as JSON wants them, and the
completed and failed bodies of POST /api/dataset (and of every endpoint that runs a query).

One failure status everywhere: FAILED_STATUS (400, as current Metabase sends for a failed query);
success is 202 (SUCCESS_STATUS), as Metabase's streaming responses are.
"""
from __future__ import annotations

import datetime as dt
import decimal
import operator
import uuid
from typing import Any, Callable, Iterable

import orjson

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


# core.http.api.JSON_OPTIONS: nested values (JSON and array cells) are written as the rest of the body is.
ROW_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z | orjson.OPT_SERIALIZE_NUMPY
_TEMPORAL_OBJECTS = (dt.datetime, dt.date, dt.time)
TEMPORAL_TYPES = frozenset({"type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                            "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"})


def temporal_text_columns(cols: list[dict]) -> list[int]:
    """The columns whose text encode_rows writes as ISO-8601 (a driver may read them so: Result.read_iso_text)."""
    return [i for i, col in enumerate(cols) if (col.get("effective_type") or col.get("base_type")) in TEMPORAL_TYPES]


def encode_rows(cols: list[dict], rows: list[tuple], js_int_to_string: bool = True,
                iso_columns: frozenset[int] = frozenset()) -> bytes:
    """The rows as a JSON array, cells as json_value writes them, converting only the columns that need it.

    str, int, float, bool and None cells go to orjson as they are: OPT_STRICT_INTEGER refuses an integer
    JavaScript would lose, and only then is every cell converted one by one (json_rows). A column is
    converted in Python only when its values are temporal objects (written with isoformat, not orjson's
    RFC 3339 with Z) or it is a temporal column of other values (SQLite's text "2024-01-05 13:45:00"
    becomes ISO-8601: "2024-01-05T13:45:00", the form the other engines' values take).
    Engines other than SQLite return one Python type per column, so the first non-null value decides;
    SQLite returns no temporal objects at all. bytes and Decimal (rare) go through json_value as orjson
    meets them. `iso_columns`: temporal text columns the driver already read in ISO-8601 form."""
    if not rows:
        return b"[]"
    converters = {}
    for i, col in enumerate(cols):
        first = next((row[i] for row in rows if row[i] is not None), None)
        if isinstance(first, _TEMPORAL_OBJECTS):
            converters[i] = _isoformat_column
        elif first is not None and i not in iso_columns and \
                (col.get("effective_type") or col.get("base_type")) in TEMPORAL_TYPES:
            converters[i] = _iso_text_column
    if converters:
        columns = list(zip(*rows))
        for i, convert in converters.items():
            columns[i] = convert(columns[i])
        rows = list(zip(*columns))
    option = ROW_OPTIONS | orjson.OPT_STRICT_INTEGER if js_int_to_string else ROW_OPTIONS
    try:
        return orjson.dumps(rows, default=_cell_default, option=option)
    except TypeError:  # an integer beyond 53 bits (or 64): the per-cell path, as before
        from core.http.api import dumps

        return dumps(json_rows(rows, js_int_to_string))


def _isoformat_column(values: tuple) -> list:
    return [None if v is None else v.isoformat() for v in values]


_AT_10 = operator.itemgetter(10)
_FIRST_SPACE_TO_T = operator.methodcaller("replace", " ", "T", 1)


def _iso_text_column(values: tuple) -> list:
    # The usual column, all canonical text with its one space at index 10, is checked and converted by
    # C loops (map); any other column value by value.
    if set(map(type, values)) == {str} and min(map(len, values)) >= 19 and set(map(_AT_10, values)) == {" "} \
            and "".join(values).count(" ") == len(values):
        return list(map(_FIRST_SPACE_TO_T, values))
    return [v[:10] + "T" + v[11:] if type(v) is str and len(v) >= 19 and v[10] == " " else v for v in values]


def _cell_default(value: Any) -> Any:
    """What orjson cannot write itself: Decimal, bytes, memoryview (as json_value), sets (as lists)."""
    if isinstance(value, (set, frozenset)):
        return list(value)
    converted = json_value(value)
    if converted is value:
        raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")
    return converted


def results_metadata(cols: list[dict]) -> dict:
    keys = ("name", "display_name", "base_type", "effective_type", "semantic_type", "field_ref", "id",
            "table_id", "unit", "fingerprint", "description", "coercion_strategy", "visibility_type", "settings")
    return {"columns": [{k: c.get(k) for k in keys if k in c or k in ("semantic_type", "fingerprint")} for c in cols]}


def cell_json(js_int_to_string: bool) -> Callable[[Any], bytes]:
    """A cell's JSON text as encode_rows writes it, for a driver that writes rows as JSON itself and
    leaves some cells to Python (core.driver.records.QueryResult.json)."""
    def cell(value: Any) -> bytes:
        return orjson.dumps(json_value(value, js_int_to_string), default=_cell_default, option=ROW_OPTIONS)

    return cell


def rows_json(ctx, result) -> tuple[bytes, list[tuple]]:
    """The result's rows as the JSON array encode_rows writes, and rows to infer column types from:
    written by the driver when it can (Result.json_rows: no Python value per cell), else read in
    whole batches and encoded once."""
    written = result.json_rows(JS_MAX_SAFE_INT if ctx.js_int_to_string else 0, cell_json(ctx.js_int_to_string))
    if written is not None:
        text, firsts = written
        return text, [firsts]
    rows: list[tuple] = []
    for batch in result.batches():  # whole batches: no Python step per row
        rows.extend(batch)
    return encode_rows(result.cols, rows, ctx.js_int_to_string, result.iso_columns), rows


def data_body(ctx, result, rows: bytes, sample: list[tuple]) -> bytes:
    """A completed response's `data` object as JSON: the rows already encoded (rows_json), then the
    columns (types inferred from `sample` where the engine gave none) and the rest. This is what the
    result cache stores and serves as it is."""
    from core.http.api import dumps

    from .context import setting

    infer_base_types(result.cols, sample)
    timezone = setting(ctx.session, "report-timezone") or None
    rest: dict[str, Any] = {
        "cols": result.cols,
        "native_form": result.native_form,
        "results_timezone": timezone or "UTC",
        "requested_timezone": timezone,
        "results_metadata": results_metadata(result.cols),
        "insights": None,
        "download_perms": "full",
        "format-rows?": True,
        "is_sandboxed": False,
    }
    if result.truncated:
        rest["rows_truncated"] = ctx.max_rows
    return b'{"rows":' + rows + b"," + dumps(rest)[1:]


def completed_body(ctx, result, data: bytes, row_count: int) -> bytes:
    """The completed response around an encoded `data` object: only the fields of this run are written here
    (context, json_query, timings, cached), so a cached `data` is never decoded."""
    from core.http.api import dumps

    outer: dict[str, Any] = {
        "row_count": row_count,
        "status": "completed",
        "context": ctx.context,
        "json_query": json_query(ctx.dataset_query),
        "started_at": iso(ctx.started_at),
        "running_time": result.running_time,
        "average_execution_time": ctx.average_execution_time,
        "database_id": ctx.database.id,
        "cached": None if result.cached is None else iso(result.cached),
    }
    if result.cached is not None:
        outer["updated_at"] = iso(result.cached)
    return b'{"data":' + data + b"," + dumps(outer)[1:]


def json_query(dataset_query: Any) -> Any:
    """The query as the response echoes it, with the middleware defaults Metabase adds."""
    if not isinstance(dataset_query, dict):
        return dataset_query
    query = dict(dataset_query)
    middleware = dict(query.get("middleware") or {})
    middleware.setdefault("js-int-to-string?", True)
    middleware.setdefault("add-default-userland-constraints?", True)
    query["middleware"] = middleware
    return query


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")

