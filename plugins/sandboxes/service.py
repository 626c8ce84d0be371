"""Sandboxes (Metabase's GTAPs): storing them, checking them, and what they make of a user's reads.

A sandbox of (group, table) applies to a user when the group is one of theirs and its own view-data
value on the table is "sandboxed", unless the user's best value over their groups is better
(unrestricted: another group lifts it). Two applicable sandboxes on one table refuse the table,
naming the groups. A sandbox either filters the table by user attributes (`attribute_remappings`
{attribute: ["dimension", field ref]}) or replaces it by a saved question (`card_id`; its columns
must be columns of the table, of the same types), whose template tags the attributes fill
(["variable", ["template-tag", name]]) and whose columns the dimensions filter. A missing attribute
refuses the query. The restriction itself is applied by the core (core.query.restrictions).
"""
from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.appdb.models import ADMIN_GROUP_ID, Card, Field, PermissionsGroup, Table, User
from core.assembly.records import SandboxChange, TableRestriction
from core.http.errors import Invalid, NotFound
from core.policy import permissions
from core.policy.principal import account_of

from .models import Sandbox

NUMERIC = ("type/Integer", "type/BigInteger", "type/Float", "type/Decimal", "type/Number")
INTEGER = ("type/Integer", "type/BigInteger")


def sandbox_json(sandbox: Sandbox) -> dict:
    return {"id": sandbox.id, "group_id": sandbox.group_id, "table_id": sandbox.table_id,
            "card_id": sandbox.card_id, "attribute_remappings": sandbox.attribute_remappings or {},
            "permission_id": None}


# --------------------------------------------------------------------------------------------------
# The API: /api/mt/gtap
# --------------------------------------------------------------------------------------------------


def list_sandboxes(session: Session, group_id: int | None, table_id: int | None) -> Any:
    """Every sandbox, or the one of (group_id, table_id) when both are given (404 when none)."""
    if group_id is not None and table_id is not None:
        found = session.scalar(select(Sandbox).where(Sandbox.group_id == group_id, Sandbox.table_id == table_id))
        if found is None:
            raise NotFound()
        return sandbox_json(found)
    query = select(Sandbox).order_by(Sandbox.id)
    if group_id is not None:
        query = query.where(Sandbox.group_id == group_id)
    if table_id is not None:
        query = query.where(Sandbox.table_id == table_id)
    return [sandbox_json(s) for s in session.scalars(query)]


def get_sandbox(session: Session, sandbox_id: int) -> dict:
    return sandbox_json(_sandbox(session, sandbox_id))


def _sandbox(session: Session, sandbox_id: int) -> Sandbox:
    found = session.get(Sandbox, sandbox_id)
    if found is None:
        raise NotFound()
    return found


def create(session: Session, change: SandboxChange) -> dict:
    validate(session, change)
    if session.scalar(select(Sandbox.id).where(Sandbox.group_id == change.group_id,
                                               Sandbox.table_id == change.table_id)) is not None:
        raise Invalid("A sandbox for this group and table already exists.")
    sandbox = Sandbox(group_id=change.group_id, table_id=change.table_id, card_id=change.card_id,
                      attribute_remappings=dict(change.attribute_remappings))
    session.add(sandbox)
    session.commit()
    return sandbox_json(sandbox)


def update(session: Session, sandbox_id: int, fields: dict) -> dict:
    """PUT /:id: card_id and attribute_remappings (the keys sent; group and table never change)."""
    sandbox = _sandbox(session, sandbox_id)
    change = SandboxChange(group_id=sandbox.group_id, table_id=sandbox.table_id,
                           card_id=fields["card_id"] if "card_id" in fields else sandbox.card_id,
                           attribute_remappings=(fields.get("attribute_remappings") or {})
                           if "attribute_remappings" in fields else (sandbox.attribute_remappings or {}))
    validate(session, change)
    sandbox.card_id, sandbox.attribute_remappings = change.card_id, dict(change.attribute_remappings)
    session.commit()
    return sandbox_json(sandbox)


def remove(session: Session, sandbox_id: int) -> None:
    session.delete(_sandbox(session, sandbox_id))
    session.commit()


def apply_changes(session: Session, changes: list[SandboxChange]) -> None:
    """The graph's `sandboxes` key: each entry created, or updated in place (by id, else by group and
    table), in the graph's transaction (the caller commits)."""
    for change in changes:
        validate(session, change)
        sandbox = session.get(Sandbox, change.id) if change.id is not None else None
        if sandbox is None:
            sandbox = session.scalar(select(Sandbox).where(Sandbox.group_id == change.group_id,
                                                           Sandbox.table_id == change.table_id))
        if sandbox is None:
            session.add(Sandbox(group_id=change.group_id, table_id=change.table_id, card_id=change.card_id,
                                attribute_remappings=dict(change.attribute_remappings)))
        elif (sandbox.group_id, sandbox.table_id) != (change.group_id, change.table_id):
            raise Invalid(f"Sandbox {sandbox.id} belongs to another group or table.")
        else:
            sandbox.card_id, sandbox.attribute_remappings = change.card_id, dict(change.attribute_remappings)
    session.flush()


def drop_lifted(session: Session) -> None:
    """Sandboxes whose group no longer has "sandboxed" data access to their table are deleted (as
    Metabase does when the graph changes the value)."""
    stale = []
    for sandbox, db_id in session.execute(select(Sandbox, Table.db_id).join(Table, Table.id == Sandbox.table_id)):
        if permissions.group_data_access(session, sandbox.group_id, db_id, sandbox.table_id) != "sandboxed":
            stale.append(sandbox.id)
    if stale:
        session.execute(delete(Sandbox).where(Sandbox.id.in_(stale)))


# --------------------------------------------------------------------------------------------------
# Checking a sandbox (POST /validate, and before every write)
# --------------------------------------------------------------------------------------------------


def change_from(body: dict) -> SandboxChange:
    if not isinstance(body, dict):
        raise Invalid("Each sandbox must be a map.")
    for key in ("group_id", "table_id"):
        if not isinstance(body.get(key), int) or isinstance(body.get(key), bool) or body[key] <= 0:
            raise Invalid({key: "value must be an integer greater than zero."})
    card_id = body.get("card_id")
    if card_id is not None and (not isinstance(card_id, int) or isinstance(card_id, bool) or card_id <= 0):
        raise Invalid({"card_id": "nullable value must be an integer greater than zero."})
    remappings = body.get("attribute_remappings") or {}
    sandbox_id = body.get("id")
    return SandboxChange(group_id=body["group_id"], table_id=body["table_id"], card_id=card_id,
                         attribute_remappings=remappings,
                         id=sandbox_id if isinstance(sandbox_id, int) and not isinstance(sandbox_id, bool) else None)


def validate(session: Session, change: SandboxChange) -> None:
    """400 unless the sandbox can be applied: its group and table exist, its question is on the table's
    database and returns the table's columns with their types, and every remapping names an
    attribute and a field of the table, a column of the question or one of its template tags."""
    group = session.get(PermissionsGroup, change.group_id)
    if group is None:
        raise Invalid({"group_id": f"There is no group {change.group_id}."})
    if group.id == ADMIN_GROUP_ID:
        raise Invalid({"group_id": "Administrators cannot be sandboxed."})
    table = session.get(Table, change.table_id)
    if table is None or not table.active:
        raise Invalid({"table_id": f"There is no table {change.table_id}."})
    card = None
    if change.card_id is not None:
        card = session.get(Card, change.card_id)
        if card is None or card.archived:
            raise Invalid({"card_id": f"There is no card {change.card_id}."})
        if card.database_id != table.db_id:
            raise Invalid("A sandboxing question must read the database of the table it sandboxes.")
        _check_columns(session, card, table)
    remappings = change.attribute_remappings
    if not isinstance(remappings, dict):
        raise Invalid({"attribute_remappings": "value must be a map of attribute names to targets."})
    for attribute, target in remappings.items():
        if not isinstance(attribute, str) or not attribute.strip():
            raise Invalid({"attribute_remappings": "attribute names must be non-blank strings."})
        _target_type(session, table, card, target)


def _card_query(card: Card) -> dict:
    query = card.dataset_query
    return orjson.loads(query) if isinstance(query, (str, bytes)) else (query or {})


def _check_columns(session: Session, card: Card, table: Table) -> None:
    columns = {f.name: f for f in session.scalars(select(Field).where(Field.table_id == table.id,
                                                                       Field.parent_id.is_(None)))}
    metadata = card.result_metadata if isinstance(card.result_metadata, list) else []
    if not metadata:
        raise Invalid("The sandboxing question has no known columns: run and save it again.")
    for column in metadata:
        name = column.get("name") if isinstance(column, dict) else None
        field = columns.get(name)
        # A column the table lacks is never shown (the viewer reads the table's columns the question
        # returns); one it has must keep its type, or every question on the table would change meaning.
        if field is not None and not _same_type(column.get("base_type"), field.base_type):
            raise Invalid(f"Sandbox questions can't return columns that have different types than the table they "
                          f"are sandboxing: column {name!r} is {column.get('base_type')}, not {field.base_type}.")


TEMPORAL = ("type/Date", "type/DateTime", "type/DateTimeWithTZ", "type/DateTimeWithLocalTZ", "type/Time")


def _same_type(a: str | None, b: str | None) -> bool:
    if a == b or a is None or a == "type/*":
        return True
    if a == "type/Text" and b in TEMPORAL:
        return True  # engines that keep datetimes as text (SQLite) report a native column of them as text
    # Engines report integer columns of one table as Integer or BigInteger depending on the expression.
    return a in INTEGER and b in INTEGER or a in NUMERIC and b in NUMERIC and "type/Decimal" in (a, b)


def _target_type(session: Session, table: Table, card: Card | None, target: Any) -> str | None:
    """The base type of what an attribute is compared with; 400 when the target is not one."""
    if not (isinstance(target, list) and len(target) == 2 and target[0] in ("dimension", "variable")):
        raise Invalid({"attribute_remappings": f"{target!r} is not a [\"dimension\", ref] or [\"variable\", ref]."})
    kind, ref = target
    if kind == "variable":
        tag = _tag_name(ref)
        tags = (_card_query(card).get("native") or {}).get("template-tags") or {} if card is not None else {}
        if tag is None or tag not in tags:
            raise Invalid({"attribute_remappings": f"The sandboxing question has no variable {tag!r}."})
        return "type/Float" if tags[tag].get("type") == "number" else "type/Text"
    if isinstance(ref, list) and len(ref) == 2 and ref[0] == "template-tag":  # a field filter tag
        tags = (_card_query(card).get("native") or {}).get("template-tags") or {} if card is not None else {}
        if ref[1] not in tags:
            raise Invalid({"attribute_remappings": f"The sandboxing question has no variable {ref[1]!r}."})
        return None
    if not (isinstance(ref, list) and len(ref) >= 2 and ref[0] == "field"):
        raise Invalid({"attribute_remappings": f"{ref!r} is not a field reference."})
    ident = ref[1]
    if isinstance(ident, int):
        field = session.get(Field, ident)
        if field is None or (card is None and field.table_id != table.id):
            raise Invalid({"attribute_remappings": f"Field {ident} is not a column of table {table.name!r}."})
        return field.base_type
    if isinstance(ident, str) and card is not None:
        options = ref[2] if len(ref) > 2 and isinstance(ref[2], dict) else {}
        return options.get("base-type")
    raise Invalid({"attribute_remappings": f"{ref!r} is not a field of the table or a column of the question."})


def _tag_name(ref: Any) -> str | None:
    if isinstance(ref, list) and len(ref) == 2 and ref[0] == "template-tag" and isinstance(ref[1], str):
        return ref[1]
    return None


# --------------------------------------------------------------------------------------------------
# What a user may read: the restrict_tables hook
# --------------------------------------------------------------------------------------------------


EMBEDDING_GROUP_SETTING = "embedding-sandbox-group-id"


def valid_group_id(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise Invalid("The embedding sandbox group must be a group id (a positive integer).")
    return value


def restrictions(session: Session, viewer, database_id: int) -> list[TableRestriction]:
    if getattr(viewer, "tenant", None) is not None:
        return _embedded(session, viewer.attributes, database_id)
    account = account_of(viewer)
    if account is None or not account.is_active or permissions.is_admin(account):
        return []
    if not permissions.is_sandboxed(session, account):
        return []
    groups = permissions.group_ids(session, account)
    # The attributes are read here (not from the request's user): kept answers depend on core_user.
    attributes = session.scalar(select(User.login_attributes).where(User.id == account.id)) or {}
    table_ids = list(session.scalars(select(Table.id).where(Table.db_id == database_id, Table.active.is_(True))))
    sandboxed = [t for t in table_ids if permissions.data_access(session, account, database_id, t) == "sandboxed"]
    if not sandboxed:
        return []
    by_table: dict[int, list[Sandbox]] = {}
    for sandbox in session.scalars(select(Sandbox).where(Sandbox.table_id.in_(sandboxed), Sandbox.group_id.in_(groups))
                                   .order_by(Sandbox.group_id)):
        if permissions.group_data_access(session, sandbox.group_id, database_id, sandbox.table_id) == "sandboxed":
            by_table.setdefault(sandbox.table_id, []).append(sandbox)
    out = []
    for table_id in sandboxed:
        found = by_table.get(table_id, [])
        if not found:
            out.append(TableRestriction(table_id, key="none", label="sandboxed without a sandbox",
                                        error=f"Table {table_id} is sandboxed for you, but no sandbox defines what "
                                              "you may see of it."))
        elif len(found) > 1:
            names = sorted(session.scalars(select(PermissionsGroup.name).where(
                PermissionsGroup.id.in_([s.group_id for s in found]))))
            out.append(TableRestriction(table_id, key="several", label="several sandboxes",
                                        error=f"Found more than one sandbox for table {table_id} (groups "
                                              f"{', '.join(names)}): a user may be in only one sandboxed group "
                                              "for a table."))
        else:
            out.append(_restriction(session, found[0], attributes if isinstance(attributes, dict) else {}))
    return out


def _embedded(session: Session, attributes: dict, database_id: int) -> list[TableRestriction]:
    """A signed embed's grant: the embedding group's sandboxes filled with the token's attributes. Its
    tables are restricted whatever the token carries (no attribute: the query is refused), and the token's
    attributes restrict nothing else, so they never widen what the group sees. Attributes with no
    embedding group set refuse every table: the embedder meant to restrict, and nothing here could."""
    from flask import current_app

    group_id = current_app.extensions["tessera"].settings.get_or(session, EMBEDDING_GROUP_SETTING)
    tables = list(session.scalars(select(Table.id).where(Table.db_id == database_id, Table.active.is_(True))))
    if group_id is None or session.get(PermissionsGroup, group_id) is None:
        if not attributes:
            return []
        return [TableRestriction(t, key="no group", label="embedding without a sandbox group",
                                 error="The embedding token carries user attributes, but no embedding sandbox "
                                       f"group is set ({EMBEDDING_GROUP_SETTING}).") for t in tables]
    out = []
    for sandbox in session.scalars(select(Sandbox).where(Sandbox.group_id == group_id, Sandbox.table_id.in_(tables))):
        if permissions.group_data_access(session, group_id, database_id, sandbox.table_id) == "sandboxed":
            out.append(_restriction(session, sandbox, attributes))
    return out


def _restriction(session: Session, sandbox: Sandbox, attributes: dict) -> TableRestriction:
    label = f"sandbox {sandbox.id}"
    table = session.get(Table, sandbox.table_id)
    card = session.get(Card, sandbox.card_id) if sandbox.card_id is not None else None
    filters, parameters, used = [], [], {}
    for attribute, target in sorted((sandbox.attribute_remappings or {}).items()):
        if attribute not in attributes or attributes[attribute] is None:
            return TableRestriction(sandbox.table_id, key="missing", label=label,
                                    error=f"Query requires user attribute `{attribute}`")
        try:
            base_type = _target_type(session, table, card, target)
            value = _converted(attributes[attribute], base_type)
        except Invalid as exc:
            return TableRestriction(sandbox.table_id, key="invalid", label=label, error=exc.message
                                    if isinstance(exc.message, str) else f"Sandbox {sandbox.id} is invalid.")
        except ValueError:
            return TableRestriction(sandbox.table_id, key="invalid", label=label,
                                    error=f"User attribute `{attribute}` is not a number, as the sandbox needs.")
        used[attribute] = value
        kind, ref = target
        if kind == "variable" or (isinstance(ref, list) and ref and ref[0] == "template-tag"):
            parameters.append({"type": "category", "target": target, "value": value})
        else:
            field_ref = ["field", ref[1], ref[2] if len(ref) > 2 and isinstance(ref[2], dict) else {}]
            filters.append(["=", field_ref, value])
    key = orjson.dumps([sandbox.id, sandbox.card_id, used], option=orjson.OPT_SORT_KEYS, default=str).decode()
    # The question as a card source: its columns' metadata come with it (core.query.cards).
    source = ({"database": table.db_id, "type": "query", "query": {"source-table": f"card__{card.id}"}}
              if card is not None else None)
    return TableRestriction(sandbox.table_id, source=source, parameters=tuple(parameters), filters=tuple(filters),
                            key=key, label=label)


def _converted(value: Any, base_type: str | None) -> Any:
    """An attribute as the compared column's type: a string of digits for a numeric column becomes a
    number (login attributes from SSO are strings)."""
    if base_type in NUMERIC and isinstance(value, str):
        number = float(value.strip())
        return int(number) if base_type in INTEGER or number.is_integer() else number
    return value


# --------------------------------------------------------------------------------------------------
# User attributes: /api/mt/user
# --------------------------------------------------------------------------------------------------


def attribute_names(session: Session) -> list[str]:
    """Every attribute name some active user has, sorted (what the sandbox editor offers)."""
    names: set[str] = set()
    for attributes in session.scalars(select(User.login_attributes).where(
            User.is_active.is_(True), User.login_attributes.is_not(None))):
        if isinstance(attributes, dict):
            names.update(k for k in attributes if isinstance(k, str))
    return sorted(names)


def set_attributes(session: Session, user_id: int, attributes: dict | None) -> None:
    target = session.get(User, user_id)
    if target is None or target.type != "personal":
        raise NotFound()
    if attributes is not None and any(not isinstance(k, str) or not k.strip() for k in attributes):
        raise Invalid({"login_attributes": "nullable map from <keyword, string> to anything"})
    target.login_attributes = attributes or None
    session.commit()

