"""Analysis after a schema sync: fingerprints of sampled values and the semantic types inferred from
a field's name and values (compat/core.md section 8), and a table's entity type from its name.

Pure functions over Python values; core.sync.schema fetches the sample and stores what these return.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import re
import statistics
from typing import Any, Iterable

FINGERPRINT_VERSION = 5
MAX_SAMPLE_ROWS = 10_000
CATEGORY_CARDINALITY = 30
AUTO_LIST_CARDINALITY = 1000
NO_PREVIEW_AVERAGE_LENGTH = 50

INTEGER_TYPES = {"type/Integer", "type/BigInteger"}
FLOAT_TYPES = {"type/Float", "type/Decimal"}
NUMBER_TYPES = INTEGER_TYPES | FLOAT_TYPES | {"type/Number"}
TEXT_TYPES = {"type/Text", "type/TextLike", "type/UUID", "type/PostgresEnum", "type/MySQLEnum"}
DATE_TYPES = {"type/Date"}
TIME_TYPES = {"type/Time", "type/TimeWithTZ", "type/TimeWithLocalTZ", "type/TimeWithZoneOffset"}
DATETIME_TYPES = {"type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ",
                  "type/DateTimeWithZoneOffset", "type/DateTimeWithZoneID", "type/Instant"}
TEMPORAL_TYPES = DATE_TYPES | TIME_TYPES | DATETIME_TYPES | {"type/Temporal"}
COLLECTION_TYPES = {"type/Structured", "type/Collection", "type/Dictionary", "type/Array", "type/JSON",
                    "type/SerializedJSON", "type/XML"}
RELATION_TYPES = {"type/PK", "type/FK"}

STATES = {
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
    "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH",
    "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
    "ALABAMA", "ALASKA", "ARIZONA", "ARKANSAS", "CALIFORNIA", "COLORADO", "CONNECTICUT", "DELAWARE",
    "DISTRICT OF COLUMBIA", "FLORIDA", "GEORGIA", "HAWAII", "IDAHO", "ILLINOIS", "INDIANA", "IOWA", "KANSAS",
    "KENTUCKY", "LOUISIANA", "MAINE", "MARYLAND", "MASSACHUSETTS", "MICHIGAN", "MINNESOTA", "MISSISSIPPI",
    "MISSOURI", "MONTANA", "NEBRASKA", "NEVADA", "NEW HAMPSHIRE", "NEW JERSEY", "NEW MEXICO", "NEW YORK",
    "NORTH CAROLINA", "NORTH DAKOTA", "OHIO", "OKLAHOMA", "OREGON", "PENNSYLVANIA", "RHODE ISLAND",
    "SOUTH CAROLINA", "SOUTH DAKOTA", "TENNESSEE", "TEXAS", "UTAH", "VERMONT", "VIRGINIA", "WASHINGTON",
    "WEST VIRGINIA", "WISCONSIN", "WYOMING",
}
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
URL_RE = re.compile(r"^(https?|ftp)://[^\s/$.?#][^\s]*$", re.IGNORECASE)


def kind(base_type: str) -> str:
    if base_type in INTEGER_TYPES:
        return "integer"
    if base_type in FLOAT_TYPES or base_type == "type/Number":
        return "float"
    if base_type in TEXT_TYPES:
        return "text"
    if base_type == "type/Boolean":
        return "boolean"
    if base_type in DATE_TYPES:
        return "date"
    if base_type in TIME_TYPES:
        return "time"
    if base_type in DATETIME_TYPES:
        return "datetime"
    if base_type in COLLECTION_TYPES:
        return "collection"
    return "other"


# --------------------------------------------------------------------------------------------------
# Fingerprints
# --------------------------------------------------------------------------------------------------


def _as_temporal(value: Any, family: str):
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value
    if isinstance(value, (int, float)):
        return None
    text = str(value).strip()
    parsers = {"date": (dt.date.fromisoformat, dt.datetime.fromisoformat),
               "time": (dt.time.fromisoformat,)}.get(family, (dt.datetime.fromisoformat, dt.date.fromisoformat))
    for parse in parsers:
        try:
            return parse(text)
        except ValueError:
            continue
    return None


def _iso(value: Any) -> str:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.isoformat() + "Z"
    return value.isoformat()


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def _number(value: Any) -> float | None:
    """The value as a finite float, else None: infinities and NaN have no place in statistics that
    are stored as JSON (and make the statistics module raise)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def fingerprint(base_type: str, values: list[Any]) -> dict:
    """Metabase's fingerprint of one column's sampled values."""
    total = len(values)
    present = [v for v in values if v is not None]
    hashable = [v if not isinstance(v, (list, dict)) else json.dumps(v, sort_keys=True) for v in present]
    result: dict = {"global": {"distinct-count": len(set(hashable)),
                               "nil%": (total - len(present)) / total if total else 0.0}}
    family = kind(base_type)
    if family in ("integer", "float"):
        numbers = [n for n in (_number(v) for v in present) if n is not None]
        if numbers:
            quartiles = statistics.quantiles(numbers, n=4, method="inclusive") if len(numbers) > 1 else [numbers[0]] * 3
            result["type"] = {"type/Number": {
                "min": min(numbers), "max": max(numbers), "avg": statistics.fmean(numbers),
                "q1": quartiles[0], "q3": quartiles[2],
                "sd": statistics.stdev(numbers) if len(numbers) > 1 else None,
            }}
        else:
            result["type"] = {"type/Number": {"min": None, "max": None, "avg": None, "q1": None, "q3": None, "sd": None}}
    elif family == "text":
        texts = [str(v) for v in present]
        n = len(texts) or 1
        result["type"] = {"type/Text": {
            "percent-json": sum(_is_json(t) for t in texts) / n if texts else 0.0,
            "percent-url": sum(bool(URL_RE.match(t)) for t in texts) / n if texts else 0.0,
            "percent-email": sum(bool(EMAIL_RE.match(t)) for t in texts) / n if texts else 0.0,
            "percent-state": sum(t.strip().upper() in STATES for t in texts) / n if texts else 0.0,
            "average-length": sum(len(t) for t in texts) / n if texts else 0.0,
        }}
    elif family in ("date", "datetime", "time"):
        moments = [m for m in (_as_temporal(v, family) for v in present) if m is not None]
        comparable = [m for m in moments if type(m) is type(moments[0])] if moments else []
        if comparable and isinstance(comparable[0], dt.datetime):
            # Mixed naive and aware values cannot be compared; keep those of the first kind.
            aware = comparable[0].tzinfo is not None
            comparable = [m for m in comparable if (m.tzinfo is not None) == aware]
        result["type"] = {"type/DateTime": {
            "earliest": _iso(min(comparable)) if comparable else None,
            "latest": _iso(max(comparable)) if comparable else None,
        }}
    return result


# --------------------------------------------------------------------------------------------------
# Semantic types
# --------------------------------------------------------------------------------------------------

# (pattern on the lower-cased name, the base-type families it applies to, semantic type); first match wins.
_ANY = {"integer", "float", "text", "boolean", "date", "time", "datetime", "collection", "other"}
_NUM = {"integer", "float"}
_INT_TEXT = {"integer", "text"}
_TEMPORAL = {"date", "time", "datetime"}
NAME_PATTERNS: tuple[tuple[re.Pattern, set[str], str], ...] = tuple(
    (re.compile(p), families, semantic) for p, families, semantic in (
        (r"^id$", _ANY, "type/PK"),
        (r"^(lon|lng|long|longitude)$|_(lon|lng|long|longitude)$", {"float"}, "type/Longitude"),
        (r"^(lat|latitude)$|_(lat|latitude)$", {"float"}, "type/Latitude"),
        (r"_type$|^(currency|gender|role|sex|status|type)$", {"text"}, "type/Category"),
        (r"_url$|^url$", {"text"}, "type/URL"),
        (r"^city$", {"text"}, "type/City"),
        (r"^country|_country$", {"text"}, "type/Country"),
        (r"^(name|first_?name|last_?name|full_?name)$", {"text"}, "type/Name"),
        (r"^(postal_?code|zip_?code|zip)$", _INT_TEXT, "type/ZipCode"),
        (r"discount", _NUM, "type/Discount"),
        (r"income", _NUM, "type/Income"),
        (r"quantity|count$|number|^num_", {"integer"}, "type/Quantity"),
        (r"birth_?date|birthday|date_of_birth", {"date", "datetime"}, "type/Birthdate"),
        (r"join", {"date"}, "type/JoinDate"), (r"join", {"time"}, "type/JoinTime"),
        (r"join", {"datetime"}, "type/JoinTimestamp"),
        (r"create|start", {"date"}, "type/CreationDate"), (r"create|start", {"time"}, "type/CreationTime"),
        (r"create|start", {"datetime"}, "type/CreationTimestamp"),
        (r"cancel", {"date"}, "type/CancelationDate"), (r"cancel", {"time"}, "type/CancelationTime"),
        (r"cancel", {"datetime"}, "type/CancelationTimestamp"),
        (r"delet", {"date"}, "type/DeletionDate"), (r"delet", {"time"}, "type/DeletionTime"),
        (r"delet", {"datetime"}, "type/DeletionTimestamp"),
        (r"update", {"date"}, "type/UpdatedDate"), (r"update", {"time"}, "type/UpdatedTime"),
        (r"update", {"datetime"}, "type/UpdatedTimestamp"),
        (r"source|channel", _INT_TEXT, "type/Source"),
        (r"share|percent|rate$", {"float"}, "type/Share"),
        (r"margin", _NUM, "type/GrossMargin"),
        (r"cost", _NUM, "type/Cost"),
        (r"duration", _NUM, "type/Duration"),
        (r"author|creator|created_by", _INT_TEXT, "type/Author"),
        (r"owner", _INT_TEXT, "type/Owner"),
        (r"company|vendor", _INT_TEXT, "type/Company"),
        (r"subscription", _INT_TEXT, "type/Subscription"),
        (r"score|rating|stars", _NUM, "type/Score"),
        (r"description", {"text"}, "type/Description"),
        (r"title", {"text"}, "type/Title"),
        (r"comment", {"text"}, "type/Comment"),
    )
)


def semantic_type_from_name(name: str, base_type: str) -> str | None:
    lowered = name.lower()
    family = kind(base_type)
    for pattern, families, semantic in NAME_PATTERNS:
        if family in families and pattern.search(lowered):
            return semantic
    return None


def classify(name: str, base_type: str, semantic_type: str | None, has_field_values: str | None,
             fp: dict | None) -> dict:
    """What analysis changes on a field: semantic_type, has_field_values and preview_display.

    Relation types (PK/FK) and anything an admin set are kept: only a missing value is inferred.
    """
    changes: dict = {}
    family = kind(base_type)
    semantic = semantic_type
    if semantic is None:
        semantic = semantic_type_from_name(name, base_type)
    distinct = (fp or {}).get("global", {}).get("distinct-count")
    nil_share = (fp or {}).get("global", {}).get("nil%", 0.0)
    listable = family not in ("date", "time", "datetime", "collection", "float") and semantic not in RELATION_TYPES
    if semantic is None and listable and distinct is not None and distinct <= CATEGORY_CARDINALITY and (
            nil_share < 1 or family == "boolean"):
        semantic = "type/Category"
    text = ((fp or {}).get("type") or {}).get("type/Text")
    if semantic is None and family == "text" and text:
        if text["percent-email"] >= 0.95:
            semantic = "type/Email"
        elif text["percent-url"] >= 0.95:
            semantic = "type/URL"
        elif text["percent-json"] >= 0.95:
            semantic = "type/SerializedJSON"
        elif text["percent-state"] >= 0.7:
            semantic = "type/State"
    if semantic != semantic_type:
        changes["semantic_type"] = semantic
    if has_field_values is None and (family == "boolean" or (
            listable and distinct is not None and distinct <= AUTO_LIST_CARDINALITY)):
        changes["has_field_values"] = "auto-list"
    if family == "text" and semantic in (None, "type/SerializedJSON") and text and \
            text["average-length"] > NO_PREVIEW_AVERAGE_LENGTH:
        changes["preview_display"] = False
    return changes


def inferred_has_field_values(base_type: str, stored: str | None) -> str:
    """What the API shows: auto-list reads as list; unset is search for text and none otherwise."""
    if stored == "auto-list":
        return "list"
    if stored:
        return stored
    return "search" if kind(base_type) == "text" else "none"


# --------------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------------

ENTITY_PATTERNS = (
    (re.compile(r"^(order|transaction|sale)|(orders|transactions|sales)$"), "entity/TransactionTable"),
    (re.compile(r"^product|products$"), "entity/ProductTable"),
    (re.compile(r"^(user|account|people|person|employee)|(users|accounts|people|persons|employees)$"), "entity/UserTable"),
    (re.compile(r"^(event|checkin|log)|(events|checkins|logs)$"), "entity/EventTable"),
    (re.compile(r"^subscription|subscriptions$"), "entity/SubscriptionTable"),
    (re.compile(r"^(company|companies|vendor)|(companies|vendors)$"), "entity/CompanyTable"),
)


def entity_type(table_name: str) -> str:
    lowered = table_name.lower()
    for pattern, entity in ENTITY_PATTERNS:
        if pattern.search(lowered):
            return entity
    return "entity/GenericTable"


def columns_of(rows: Iterable[tuple], width: int) -> list[list[Any]]:
    """Rows turned into columns (one list per column)."""
    columns: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for i in range(width):
            columns[i].append(row[i])
    return columns
