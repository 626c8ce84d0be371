"""Which fields a template's `field_type` matches: Metabase's type hierarchy as far as x-rays need it
(base types and semantic types, several parents allowed), and the table entity types' hierarchy."""
from __future__ import annotations

from functools import lru_cache

PARENTS: dict[str, tuple[str, ...]] = {
    "type/Integer": ("type/Number",), "type/BigInteger": ("type/Integer",), "type/Float": ("type/Number",),
    "type/Decimal": ("type/Float",), "type/Number": ("type/*",),
    "type/Date": ("type/Temporal",), "type/DateTime": ("type/Temporal",), "type/Time": ("type/Temporal",),
    "type/DateTimeWithTZ": ("type/DateTime",), "type/DateTimeWithLocalTZ": ("type/DateTimeWithTZ",),
    "type/DateTimeWithZoneOffset": ("type/DateTimeWithTZ",), "type/DateTimeWithZoneID": ("type/DateTimeWithTZ",),
    "type/Instant": ("type/DateTime",), "type/TimeWithTZ": ("type/Time",), "type/Temporal": ("type/*",),
    "type/Text": ("type/*",), "type/Boolean": ("type/*",),
    # semantic types
    "type/CreationTimestamp": ("type/CreationTemporal", "type/DateTime"),
    "type/CreationDate": ("type/CreationTemporal", "type/Date"), "type/CreationTime": ("type/CreationTemporal",),
    "type/JoinTimestamp": ("type/JoinTemporal", "type/DateTime"), "type/JoinDate": ("type/JoinTemporal", "type/Date"),
    "type/Birthdate": ("type/Date",), "type/CreationTemporal": ("type/Temporal",),
    "type/JoinTemporal": ("type/Temporal",),
    "type/Address": ("type/Location",), "type/City": ("type/Address", "type/Category"),
    "type/State": ("type/Address", "type/Category"), "type/Country": ("type/Address", "type/Category"),
    "type/ZipCode": ("type/Address",), "type/Coordinate": ("type/Location",),
    "type/Latitude": ("type/Coordinate",), "type/Longitude": ("type/Coordinate",),
    "type/Source": ("type/Category",), "type/Company": ("type/Category",), "type/Enum": ("type/Category",),
    "type/Product": ("type/Category",), "type/Channel": ("type/Category",),
    "type/Income": ("type/Currency",), "type/Price": ("type/Currency",), "type/Cost": ("type/Currency",),
    "type/Discount": ("type/Currency",), "type/GrossMargin": ("type/Currency",),
    "type/Currency": ("type/Number",), "type/Quantity": ("type/Number",), "type/Score": ("type/Number",),
    "type/Share": ("type/Number",), "type/Percentage": ("type/Number",), "type/Duration": ("type/Number",),
}

# Keys and places are never "numbers" or "categories" to summarise, whatever their base type.
OPAQUE_SEMANTICS = {"type/PK", "type/FK", "type/Latitude", "type/Longitude", "type/ZipCode", "type/Email",
                    "type/URL", "type/ImageURL", "type/AvatarURL", "type/SerializedJSON", "type/Name",
                    "type/Title", "type/Description", "type/Comment", "type/Address"}

ENTITY_PARENTS = {
    "TransactionTable": "EventTable", "EventTable": "GenericTable", "UserTable": "GenericTable",
    "ProductTable": "GenericTable", "CompanyTable": "GenericTable", "SubscriptionTable": "GenericTable",
}


@lru_cache(maxsize=None)
def ancestors(type_name: str) -> frozenset[str]:
    seen = {type_name}
    for parent in PARENTS.get(type_name, ()):
        seen |= ancestors(parent)
    return frozenset(seen)


def isa(type_name: str | None, wanted: str) -> bool:
    return bool(type_name) and wanted in ancestors(type_name)


def canonical(field_type: str) -> str:
    """"Category" -> "type/Category", "type/Number" unchanged."""
    return field_type if field_type.startswith("type/") else "type/" + field_type


def field_isa(col, wanted: str) -> bool:
    """Whether a column (base or semantic type) is a `wanted`; keys only match "type/PK"/"type/FK"."""
    wanted = canonical(wanted)
    if wanted in ("type/PK", "type/FK"):
        return col.semantic_type == wanted
    if col.semantic_type in OPAQUE_SEMANTICS and not isa(col.semantic_type, wanted):
        return False
    if wanted == "type/*":
        return True
    return isa(col.semantic_type, wanted) or isa(col.effective_type, wanted)


def entity_chain(entity_type: str) -> list[str]:
    """"TransactionTable" -> ["TransactionTable", "EventTable", "GenericTable"]."""
    chain = [entity_type]
    while chain[-1] in ENTITY_PARENTS:
        chain.append(ENTITY_PARENTS[chain[-1]])
    if chain[-1] != "GenericTable":
        chain.append("GenericTable")
    return chain


def short_entity(entity_type: str | None) -> str:
    return (entity_type or "entity/GenericTable").removeprefix("entity/")


def infer_entity(stored: str | None, cols) -> str:
    """A table's entity type: the one sync stored from its name unless that says nothing
    (GenericTable or none); then from its fields, as Metabase's name-and-type heuristics would."""
    stored = short_entity(stored)
    if stored != "GenericTable":
        return stored
    semantics = {c.semantic_type for c in cols if c.via is None}
    has_time = any(isa(c.semantic_type, "type/CreationTemporal") for c in cols if c.via is None)
    user_links = any(c.links_to == "UserTable" for c in cols if c.via is None)
    money = any(isa(c.semantic_type, "type/Currency") for c in cols if c.via is None)
    if has_time and user_links and money:
        return "TransactionTable"
    if has_time and user_links:
        return "EventTable"
    if "type/Email" in semantics or ("type/Name" in semantics and semantics & {"type/City", "type/State", "type/Address"}):
        return "UserTable"
    return "GenericTable"
