"""The semantic (and relation) types and coercion strategies a field may be given, and the
effective type each coercion produces. Clients may write them as keywords (":type/City")."""
from __future__ import annotations

SEMANTIC_TYPES = frozenset("type/" + name for name in (
    "PK", "FK", "Category", "Name", "Title", "Description", "Comment", "City", "State", "Country", "ZipCode",
    "Latitude", "Longitude", "Coordinate", "Address", "Email", "URL", "ImageURL", "AvatarURL", "SerializedJSON",
    "Quantity", "Score", "Discount", "Income", "Price", "Currency", "Cost", "GrossMargin", "Share", "Duration",
    "Percentage", "Source", "Company", "Author", "Owner", "Subscription", "Product", "User", "Enum", "Number",
    "Birthdate", "CreationDate", "CreationTime", "CreationTimestamp", "JoinDate", "JoinTime", "JoinTimestamp",
    "CancelationDate", "CancelationTime", "CancelationTimestamp", "DeletionDate", "DeletionTime",
    "DeletionTimestamp", "UpdatedDate", "UpdatedTime", "UpdatedTimestamp", "Structured", "XML", "Collection",
    "Dictionary", "Array", "Boolean", "Special", "Relation", "Temporal", "Channel", "Sentiment",
))

# Coercion strategy -> the effective type it produces.
COERCIONS = {
    "Coercion/UNIXSeconds->DateTime": "type/Instant",
    "Coercion/UNIXMilliSeconds->DateTime": "type/Instant",
    "Coercion/UNIXMicroSeconds->DateTime": "type/Instant",
    "Coercion/UNIXNanoSeconds->DateTime": "type/Instant",
    "Coercion/ISO8601->DateTime": "type/DateTime",
    "Coercion/ISO8601->Date": "type/Date",
    "Coercion/ISO8601->Time": "type/Time",
    "Coercion/ISO8601Bytes->Temporal": "type/DateTime",
    "Coercion/YYYYMMDDHHMMSSString->Temporal": "type/DateTime",
    "Coercion/YYYYMMDDHHMMSSBytes->Temporal": "type/DateTime",
    "Coercion/DateTime->Date": "type/Date",
    "Coercion/String->Float": "type/Float",
    "Coercion/String->Integer": "type/Integer",
    "Coercion/Float->Integer": "type/Integer",
}


# Which base types each strategy converts (Metabase's coercion hierarchy, as `is-coercible?` and the SQL
# compiler's `cast-field-if-needed` match them): numbers for UNIX times, text for parsed strings, any
# type for bytes, date-times for the date cast, floats for rounding.
_NUMBERS = ("type/Number", "type/Integer", "type/BigInteger", "type/Float", "type/Decimal")
_DATETIMES = ("type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ", "type/DateTimeWithZoneOffset",
              "type/DateTimeWithZoneID", "type/Instant")
COERCIBLE = {
    "Coercion/UNIXSeconds->DateTime": _NUMBERS,
    "Coercion/UNIXMilliSeconds->DateTime": _NUMBERS,
    "Coercion/UNIXMicroSeconds->DateTime": _NUMBERS,
    "Coercion/UNIXNanoSeconds->DateTime": _NUMBERS,
    "Coercion/ISO8601->DateTime": ("type/Text",),
    "Coercion/ISO8601->Date": ("type/Text",),
    "Coercion/ISO8601->Time": ("type/Text",),
    "Coercion/ISO8601Bytes->Temporal": None,
    "Coercion/YYYYMMDDHHMMSSString->Temporal": ("type/Text",),
    "Coercion/YYYYMMDDHHMMSSBytes->Temporal": None,
    "Coercion/DateTime->Date": _DATETIMES,
    "Coercion/String->Float": ("type/Text",),
    "Coercion/String->Integer": ("type/Text",),
    "Coercion/Float->Integer": ("type/Float",),
}


def coercible(strategy: str, base_type: str | None) -> bool:
    """Whether `strategy` converts values of `base_type` (None in COERCIBLE: any type)."""
    accepted = COERCIBLE.get(strategy, ())
    return accepted is None or base_type in accepted


def keyword(value):
    """":type/City" -> "type/City"; anything else unchanged."""
    if isinstance(value, str) and value.startswith(":"):
        return value[1:]
    return value


def valid_semantic_type(value):
    value = keyword(value)
    if value is not None and (not isinstance(value, str) or value not in SEMANTIC_TYPES):
        raise ValueError("not a semantic type")
    return value


def valid_coercion(value):
    value = keyword(value)
    if value is not None and (not isinstance(value, str) or value not in COERCIONS):
        raise ValueError("not a coercion strategy")
    return value
