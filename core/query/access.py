"""The data-access gate: the one place that decides whether a user may read what a query reads.

Every query path meets it before any SQL runs (core.query.preparation.prepare calls `check_query`;
core.query.cards.expand calls `card_source` for each card source it replaces; the processor's `{{#N}}`
and snippet resolvers call `card_source` and `snippet`; parameter and field values call `field`).
A new query path must go through the processor or call these functions itself.

Rules, Metabase's (query-perms):
- An ad-hoc query needs query permission (core.policy.permissions.can_query) on its database, and on every
  table it names, its implicit joins included; a native one needs native permission.
- A card used as a source (`card__N`, `source-card`, a join on a card, `{{#N}}`) needs read
  permission on the card's collection and its database's data not blocked; nothing is required of
  the tables inside it. A card reached only through another card is authorised by the card that
  names it, as a running saved question authorises everything it reads (`saved`): its collection
  was checked by the caller, only the data must not be blocked.
- A snippet in an ad-hoc native query needs the snippet read rule (core.policy.permissions.can_read_snippet).
- Field values (stored or queried) of a dashboard's or a saved question's filter need the field's
  table data not blocked: the object authorises them, and the query listing them (`filter_values`)
  needs data access on each table it names, not query permission (Metabase's parameter-values
  queries). Values read without such an object (the data model's routes, the query builder's) need
  the table's read permission (core.policy.permissions.can_read_table), asked by their callers.

The answer is 403 (core.http.errors.Forbidden), never the data.

Shared objects (public links, embeds): the viewer has no account, so the caller passes a `SharedGrant`
where a user goes (both are a core.policy.principal.Principal: processor functions, every function here
and core.policy.permissions accept one). A grant reads exactly what the shared object holds: its saved cards (a card a grant does not list, or any ad-hoc query, is 403),
whatever those cards read (the card authorises it, as for a saved question), and values of the fields
the object uses. It is the same gate with one more kind of viewer, not a second permission path.
"""
from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from core.appdb.models import Card, Field, Table
from core.http.errors import Forbidden, Invalid
from core.policy import permissions
from core.policy.principal import Principal, SharedGrant, is_grant

from .model import Query, Stage, referenced_ids

# The Saved Questions database: clients send it with a card source when they do not know the card's database.
VIRTUAL_DATABASE = -1337


def resolve_database(session: Session, query: Query) -> int:
    """The query's database id, the first stage's card's for the Saved Questions database (-1337).
    The one place -1337 is resolved; the query's `database` is set to the answer."""
    if query.database == VIRTUAL_DATABASE:
        card_id = query.stages[0].source_card
        card = session.get(Card, card_id) if isinstance(card_id, int) and 0 < card_id < 2**31 else None
        if card_id is None:
            raise Invalid("Invalid query: the Saved Questions database (-1337) needs a card as its source.")
        if card is None or card.archived or card.database_id is None:
            raise Invalid(f"Invalid MBQL: card {card_id} does not exist.")
        query.database = card.database_id
    return query.database


def database_of(session: Session, dataset_query: dict) -> int | None:
    """The database a posted query runs on (-1337 resolved), None when the query cannot be read (the
    processor then answers why). For checks made before the run, such as the download level."""
    from .mbql import normalize

    try:
        return resolve_database(session, normalize(dataset_query))
    except (Invalid, TypeError, ValueError, KeyError, AttributeError, IndexError):
        return None


def check_query(session: Session, user: Principal | None, query: Query, *, saved: bool,
                card_id: int | None = None, filter_values: bool = False) -> None:
    """403 unless `user` may run `query` on its database: for a saved question (`saved`: the caller
    checked the card's collection) data access; for the values of a filter of a dashboard or saved
    question the caller may read (`filter_values`, an MBQL query on fields the caller picked among those
    whose data the user sees) data access on each table it names; otherwise query (or native)
    permission on the database and on each table the query's own stages name. Cards it names are
    checked on expansion. A grant runs only its own cards (`card_id`)."""
    database_id = query.database
    if is_grant(user):
        _check_grant(session, user, query, saved, card_id)
        return
    if saved:
        if user is None or not permissions.can_see_data(session, user, database_id):
            raise Forbidden()
        return
    if filter_values:
        if user is None or query.stages[0].native is not None:
            raise Forbidden()
        tables = _tables_named(session, query.stages)
        if not permissions.can_see_data(session, user, database_id) or \
                len(permissions.tables_with_data_access(session, user, database_id, tables)) < len(tables):
            raise Forbidden()
        return
    native = query.stages[0].native is not None and len(query.stages) == 1
    if not permissions.can_query(session, user, database_id, native=native):
        raise Forbidden()
    for table_id in sorted(_tables_named(session, query.stages)):
        if not permissions.can_query(session, user, database_id, table_id=table_id):
            raise Forbidden()


def _check_grant(session: Session, grant: SharedGrant, query: Query, saved: bool, card_id: int | None) -> None:
    """A grant runs its own cards as saved questions, and the MBQL queries that list values of its
    fields (filter values, linked filters, remaps): every field such a query names is one of the grant's
    or a key (PK, FK) of their tables, which joins need, and it reads no other table."""
    if saved:
        if card_id not in grant.card_ids:
            raise Forbidden()
        return
    if query.stages[0].native is not None:
        raise Forbidden()
    # Cards it names (a filter whose values come from a card) are checked on expansion (card_source).
    allowed = set(session.scalars(select(Field.table_id).where(Field.id.in_(grant.field_ids)))) \
        if grant.field_ids else set()
    field_ids, _ = referenced_ids(query.stages)
    if not _tables_named(session, query.stages) <= allowed:
        raise Forbidden()
    others = field_ids - grant.field_ids
    if others:
        keys = set(session.scalars(select(Field.id).where(
            Field.id.in_(others), Field.table_id.in_(allowed),
            or_(Field.semantic_type.in_(("type/PK", "type/FK")), Field.fk_target_field_id.is_not(None)))))
        if others - keys:
            raise Forbidden()


def card_source(session: Session, user: Principal | None, card_id: int, database_id: int, *, saved: bool) -> Card:
    """The card a query reads as a source, once `user` may read it (see the module's rules): 400 when
    it is missing, archived or on another database, 403 when it is not readable."""
    card = session.get(Card, card_id) if 0 < card_id < 2**31 else None
    if card is None or card.archived:
        raise Invalid(f"Invalid MBQL: card {card_id} does not exist.")
    if is_grant(user):
        # Inside a shared card the card authorises its sources; otherwise only the object's own cards
        # (a filter whose values come from a card).
        if not saved and card_id not in user.card_ids:
            raise Forbidden()
        if card.database_id != database_id:
            raise Invalid(f"Invalid MBQL: card {card_id} is from a different database.")
        return card
    if not saved and not permissions.can_read_item(session, user, card.collection_id):
        raise Forbidden()
    if card.database_id is not None and not permissions.can_see_data(session, user, card.database_id):
        raise Forbidden()
    if card.database_id != database_id:
        raise Invalid(f"Invalid MBQL: card {card_id} is from a different database.")
    return card


def snippet(session: Session, user: Principal | None, collection_id: int | None, *, saved: bool) -> None:
    """403 unless the snippet may be spliced into this query: always inside a saved question (its
    author's choice, authorised with the card), else the snippet read rule."""
    if is_grant(user) and not saved:
        raise Forbidden()
    if not saved and not permissions.can_read_snippet(session, user, collection_id):
        raise Forbidden()


def field(session: Session, user: Principal | None, field_row: Field) -> None:
    """403 unless `user` may see the data of the field's table (its values, stored or queried)."""
    if is_grant(user):
        if field_row.id not in user.field_ids:
            raise Forbidden()
        return
    table = session.get(Table, field_row.table_id)
    if table is None or user is None or not permissions.can_see_data(session, user, table.db_id, table.id):
        raise Forbidden()


def readable_field_ids(session: Session, user: Principal | None, field_ids) -> set[int]:
    """The ids among `field_ids` whose table data `user` may see (remap targets are checked this way)."""
    field_ids = {i for i in field_ids if isinstance(i, int)}
    if not field_ids:
        return set()
    if is_grant(user):
        # The shared cards' own remaps: a public viewer sees the display values their author chose.
        return field_ids
    rows = session.execute(select(Field.id, Table.db_id, Table.id).join(Table, Table.id == Field.table_id)
                           .where(Field.id.in_(field_ids))).all()
    by_db: dict[int, set[int]] = {}
    for _, db_id, table_id in rows:
        by_db.setdefault(db_id, set()).add(table_id)
    readable = {db_id: permissions.tables_with_data_access(session, user, db_id, tables)
                for db_id, tables in by_db.items()}
    return {fid for fid, db_id, table_id in rows if table_id in readable[db_id]}


def _tables_named(session: Session, stages: list[Stage]) -> set[int]:
    """The tables the query's own stages read: source tables of stages and joins at any depth, and
    the tables of every field they reference (implicit joins included). Not those inside cards."""
    field_ids, table_ids = referenced_ids(stages)
    if field_ids:
        table_ids |= set(session.scalars(select(Field.table_id).where(Field.id.in_(field_ids))))
    return table_ids


def download_level(session: Session, user: Principal | None, database_id: int,
                   table_id: int | None = None) -> str:
    """"full" | "limited" | "none": what `user` may download of a database's (table's) data. A shared
    object's viewer downloads what the object shows, as Metabase's public and embed downloads."""
    if is_grant(user):
        return "full"
    return permissions.download_level(session, user, database_id, table_id)
