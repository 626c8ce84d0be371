"""core.http.kept, the middleware alone: around a small WSGI app on the test app's real app DB, what is
kept, for how long, what is made again for every copy, and what always goes to the application."""
from __future__ import annotations

import itertools
import time

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session
from werkzeug.test import Client

from core.appdb import counters
from core.http import kept
from core.http.kept import MAX_REQUEST_BODY, KeptAnswers


class Backend:
    """A WSGI app that answers "<n> <request body>" for its n-th call and does what the test says first."""

    def __init__(self, app_db, status="200 OK", headers=(), action=None, render=True):
        self.calls = 0
        self.session = Session(app_db.engine)  # the app-DB session the answer is "read" on
        self.status, self.headers, self.action, self.render = status, list(headers), action, render
        ids = itertools.count(1)
        self.wsgi = KeptAnswers(self.app, app_db, "X-Request-Id", lambda: f"id-{next(ids)}")

    def app(self, environ, start_response):
        self.calls += 1
        body = f"{self.calls} ".encode() + environ["wsgi.input"].read()
        if self.action:
            self.action()
        if self.render:
            kept.allow(self.session, time.time() + 60, lambda: b"again " + body)
        start_response(self.status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body))),
                                     ("X-Request-Id", "first"), *self.headers])
        return [body]

    def post(self, data=b"q", **headers):
        response = Client(self.wsgi).post("/api/thing", data=data, headers={"X-Metabase-Session": "t", **headers})
        return response.status_code, response.get_data(), response.headers


@pytest.fixture
def app_db(app):
    database = app.extensions["tessera"].db
    assert database.changes.read() is not None
    return database


def test_an_allowed_answer_is_served_again_rendered_anew_with_its_own_request_id(app_db):
    backend = Backend(app_db)
    assert backend.post()[:2] == (200, b"1 q")
    status, body, headers = backend.post()
    assert (status, body, backend.calls) == (200, b"again 1 q", 1)
    assert headers["Content-Length"] == str(len(body)) and headers["X-Request-Id"] == "id-1"
    assert headers["Content-Type"] == "text/plain"
    assert backend.post()[2]["X-Request-Id"] == "id-2"


def test_any_difference_in_the_request_goes_to_the_application(app_db):
    backend = Backend(app_db)
    backend.post()
    assert backend.post(data=b"other")[1] == b"2 other"  # the application read the body it was sent
    assert backend.post(**{"X-Metabase-Session": "u"})[1] == b"3 q"
    assert backend.post(**{"X-Api-Key": "k"})[1] == b"4 q"
    assert backend.post()[1] == b"again 1 q" and backend.calls == 4


def test_a_commit_to_the_app_db_ends_every_kept_answer(app, app_db):
    from core.appdb.models import Setting

    backend = Backend(app_db)
    backend.post()
    with app.app_context(), app_db.session() as session:
        session.add(Setting(key="kept-test", value="1"))
        session.commit()
    assert backend.post()[1] == b"2 q"


def test_unallowed_failed_or_cookie_setting_answers_are_not_kept(app_db):
    for backend in (Backend(app_db, render=False), Backend(app_db, status="403 Forbidden"),
                    Backend(app_db, headers=[("Set-Cookie", "metabase.SESSION=x")])):
        backend.post()
        assert backend.post()[1] == b"2 q"


def test_an_answer_read_on_a_session_that_wrote_is_not_kept(app_db):
    backend = Backend(app_db)
    backend.action = lambda: backend.session.execute(text("UPDATE setting SET value = value WHERE 1 = 0"))
    backend.post()
    assert backend.post()[1] == b"2 q"
    backend.session.rollback()


def test_a_large_body_is_passed_on_unread_and_never_kept(app_db):
    backend = Backend(app_db)
    big = b"x" * (MAX_REQUEST_BODY + 1)
    assert backend.post(data=big)[1] == b"1 " + big
    assert backend.post(data=big)[1] == b"2 " + big


def test_side_effects_are_replayed_for_every_copy_and_an_unreplayable_one_prevents_keeping(app_db):
    seen = []
    record = kept.replayable(lambda buffer, what: (seen.append(what), buffer.fold(_nothing, what)))
    backend = Backend(app_db, action=lambda: record(app_db.write_behind, "hit"))
    backend.post()
    backend.post()
    backend.post()
    assert backend.calls == 1 and seen == ["hit", "hit", "hit"]

    plain = Backend(app_db, action=lambda: app_db.write_behind.fold(_nothing, "write"))
    plain.post()
    assert plain.post()[1] == b"2 q"


def _nothing(conn, items):
    pass


def test_limit_and_the_clock_bound_how_long_an_answer_is_served(app_db, monkeypatch):
    backend = Backend(app_db, action=lambda: kept.limit(time.time() + 5))
    backend.post()
    assert backend.post()[1] == b"again 1 q"
    monkeypatch.setattr(kept, "_now", lambda: time.time() + 6)  # past limit(), before allow()'s minute
    assert backend.post()[1] == b"2 q"


def test_outside_a_request_allow_and_limit_do_nothing_and_replayable_only_runs(app_db):
    kept.allow(Session(app_db.engine), time.time(), lambda: b"")
    kept.limit(time.time())
    assert kept.replayable(lambda x: x + 1)(1) == 2


def test_the_write_behind_buffer_lists_the_writes_made_while_watched_except_unwatched_ones(app_db):
    buffer = app_db.write_behind
    with counters.watched() as seen:
        buffer.fold(_nothing, 1)
        with counters.unwatched():
            buffer.fold(_nothing, 2)
        buffer.fold(_nothing, 3)
    buffer.fold(_nothing, 4)
    assert len(seen) == 2
