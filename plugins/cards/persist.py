"""Model persistence endpoints: per database (superuser) and per model (writers of the model), as
the spec's States table says. The work is plugins.cards.persistence's."""
from __future__ import annotations

from sqlalchemy.orm import Session

from core.appdb.models import Database, User
from core.http.errors import Invalid, NotFound, check_404
from core.query.persistence import persisted_info

from . import persistence
from .service import writable_card


def _enabled(database: Database) -> bool:
    return bool((database.settings or {}).get("persist-models-enabled"))


def enable_database(session: Session, database_id: int) -> None:
    database = check_404(session.get(Database, database_id))
    if _enabled(database):
        return
    persistence.check_supported(database)
    persistence.check_can_write(database)
    database.settings = {**(database.settings or {}), "persist-models-enabled": True}
    session.commit()


def disable_database(session: Session, database_id: int) -> None:
    database = check_404(session.get(Database, database_id))
    if not _enabled(database):
        return
    persistence.disable_database(session, database)


def _model(session: Session, user: User, card_id: int):
    card = writable_card(session, user, card_id)
    if card.type != "model":
        raise Invalid("Card is not a model.")
    database = session.get(Database, card.database_id)
    if database is None:
        raise NotFound()
    if not _enabled(database):
        raise Invalid("Persisting models is not enabled for this database.")
    return card


def persist_card(session: Session, user: User, card_id: int) -> None:
    card = _model(session, user, card_id)
    info = persistence.persist(session, user, card)
    if info.state == "error":
        raise Invalid(f"The model could not be persisted: {info.error}")


def refresh_card(session: Session, user: User, card_id: int) -> None:
    card = _model(session, user, card_id)
    info = persisted_info(session, card)
    if info is None or info.state == "off":
        raise Invalid("This model is not persisted.")
    persist_card(session, user, card_id)


def unpersist_card(session: Session, user: User, card_id: int) -> None:
    card = writable_card(session, user, card_id)
    if card.type != "model":
        raise Invalid("Card is not a model.")
    persistence.unpersist(session, card)
