"""Issue 27 item 6: every public, embed and embed-preview route answers the same from the result cache as
when it ran the query. The routes are read from the app's own declarations (a new route is walked with no
edit here; a path parameter this walk cannot fill fails it), each called three times with
`enable-query-caching` on and a time to live on the database: the first run fills the cache, the second
is a hit, the third a hit on the kept prepared plan (core.query.plans), where the anonymous grant used to
reach the permission code as if it were a user (500 "'SharedGrant' object has no attribute 'is_active'")."""
from __future__ import annotations

import orjson
from sqlalchemy import func, select

from core.appdb.counters import flush
from core.appdb.models import QueryCache, QueryExecution

from .routes import comparable, kind_of, request_for, shared_routes

# Runs of shared objects that the query log records, by the route's kind.
SHARED_CONTEXTS = ("public-question", "public-dashboard", "embedded-question", "embedded-dashboard")


def test_every_shared_route_answers_the_same_from_the_cache(app, admin, shared_objects):
    routes = shared_routes(app)
    assert {kind_of(e.full_rule) for e in routes} == {"card", "dashboard", "action"}
    problems = []
    for endpoint in routes:
        headers = admin.headers if endpoint.full_rule.startswith("/api/preview-embed/") else {}
        request = request_for(endpoint, shared_objects)
        answers = [app.test_client().open(**request, headers=headers, buffered=True) for _ in range(3)]
        name = f"{endpoint.method} {endpoint.full_rule}"
        statuses = [a.status_code for a in answers]
        if any(s >= 400 for s in statuses):
            problems.append((name, statuses, answers[-1].get_data(as_text=True)[:300]))
        elif comparable(answers[1]) != comparable(answers[0]) or comparable(answers[2]) != comparable(answers[0]):
            problems.append((name, "differs on a cache hit", [comparable(a) for a in answers]))
    assert not problems, "\n".join(map(str, problems))
    flush(app)  # the query log is written behind
    with app.app_context(), app.extensions["tessera"].db.session() as session:
        assert session.scalar(select(func.count()).select_from(QueryCache)) > 0
        hits = dict(session.execute(select(QueryExecution.context, func.count()).where(
            QueryExecution.cache_hit.is_(True)).group_by(QueryExecution.context)).all())
    # The walk did reach the cache: every kind of shared run was answered from it.
    assert set(SHARED_CONTEXTS) <= set(hits), hits


def test_a_public_dashboard_card_is_served_from_the_cache_on_every_later_view(client, shared_objects):
    """The issue's case: the dashcard of a public dashboard, viewed again once its result is cached."""
    url = f"/api/public/dashboard/{shared_objects['uuid']['dashboard']}/dashcard/{shared_objects['dashcard']}/card/{shared_objects['card']}"
    first = client.get(url)
    assert first.status_code == 202, first.json
    for _ in range(3):
        again = client.get(url)
        assert again.status_code == 202, again.get_data(as_text=True)
        assert orjson.loads(again.get_data())["data"]["rows"] == first.json["data"]["rows"]
