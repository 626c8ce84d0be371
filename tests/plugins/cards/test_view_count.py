"""GET /api/card/:id counts the view off the request path (core.appdb.counters), never by committing in the request."""
import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from .fixtures import card_body, native_query


@pytest.fixture
def session_writes():
    """Every flush and commit of an ORM session while the fixture is active."""
    seen = []

    def flushed(session, _context):
        seen.append("flush")

    def committed(session):
        seen.append("commit")

    event.listen(Session, "after_flush", flushed)
    event.listen(Session, "after_commit", committed)
    yield seen
    event.remove(Session, "after_flush", flushed)
    event.remove(Session, "after_commit", committed)


def stored_view_count(app, card_id):
    """The count in the app DB once the write-behind buffer has been written."""
    from core.appdb.counters import flush
    from core.appdb.models import Card

    flush(app)
    with app.extensions["tessera"].db.engine.connect() as conn:  # not a Session: session_writes stays the GET's
        return conn.scalar(select(Card.view_count).where(Card.id == card_id))


def test_reading_a_card_commits_nothing_in_the_request_and_still_counts(app, user, warehouse, session_writes):
    card = user.post("/api/card/", json=card_body("People", native_query(warehouse["db"], "SELECT id FROM people"))).json
    assert stored_view_count(app, card["id"]) == 0
    session_writes.clear()
    first = user.get(f"/api/card/{card['id']}")
    assert first.status_code == 200 and first.json["view_count"] == 1
    assert session_writes == [], "the GET flushed or committed its request session"
    assert stored_view_count(app, card["id"]) == 1
    assert user.get(f"/api/card/{card['id']}").json["view_count"] == 2
    assert user.get(f"/api/card/{card['id']}?ignore_view=true").json["view_count"] == 2
    assert stored_view_count(app, card["id"]) == 2
    assert session_writes == []


def test_a_forbidden_read_counts_nothing(app, user, admin, warehouse):
    private = admin.user["personal_collection_id"]
    card = admin.post("/api/card/", json=card_body("Admin's", native_query(warehouse["db"], "SELECT 1"),
                                                   collection_id=private)).json
    assert user.get(f"/api/card/{card['id']}").status_code == 403
    assert stored_view_count(app, card["id"]) == 0
    assert admin.get(f"/api/card/{card['id']}").json["view_count"] == 1
    assert stored_view_count(app, card["id"]) == 1


def test_a_view_is_not_an_edit(app, user, warehouse):
    card = user.post("/api/card/", json=card_body("People", native_query(warehouse["db"], "SELECT id FROM people"))).json
    user.get(f"/api/card/{card['id']}")
    after = user.get(f"/api/card/{card['id']}").json
    assert after["view_count"] == 2 and after["updated_at"] == card["updated_at"]
