"""Schemathesis over the live OpenAPI document: every operation, fuzzed as an administrator, never answers 5xx.

The operations come from /api/docs/openapi.json, which is generated from the route declarations, so a
new endpoint is fuzzed without touching this file. The run goes through WSGI against the app object
(no network), with a fixed seed (derandomize) so that CI is repeatable, and authenticates with an
administrator's API key. An operation may destroy that key (delete, regenerate, demote or deactivate
its user): after every request the key is checked and, when it no longer makes a superuser, a new one
is minted, so no route is excluded but logout. Some examples take the ids of real objects (see
tests/support.create_content) so that the views get past their 404s.
"""
from __future__ import annotations

import time

import pytest

from core.testing import wait_for_sync
from tests.support import create_content

EXAMPLES_PER_OPERATION = 15
EXCLUDED = {("DELETE", "/api/session")}  # logout ends the session that a session-authenticated run would need
# The first path segment after /api/ -> the kind of object whose id fills that operation's {id}.
ID_KIND = {"card": "card", "collection": "collection", "database": "db", "table": "table", "field": "field",
           "native-query-snippet": "snippet", "timeline": "timeline", "timeline-event": "timeline_event",
           "segment": "segment", "metric": "metric", "user": "user", "api-key": "api_key",
           "permissions": "group", "bookmark": "card", "dashboard": "dashboard", "automagic-dashboards": "db",
           "alert": "alert", "notification": "alert"}
# Path parameters named after their kind.
PARAM_KIND = {"group_id": "group", "db_id": "db", "remapped_id": "field", "search_id": "field",
              "dashboard_id": "dashboard", "dashcard_id": "dashcard", "card_id": "card",
              "entity_id_or_query": "table", "comparison_entity_id_or_query": "table"}
# Path parameters that name a kind of object rather than an id: the x-rays of a table, compared with a table.
PARAM_VALUE = {"entity": "table", "comparison_entity": "table"}


class ServerError(Exception):
    """A 5xx answer: the operation, the status, the body and a curl reproducer."""


class Credentials:
    """The administrator's API key, minted again whenever an operation has broken it."""

    def __init__(self, app, admin_id: int):
        self.app, self.admin_id, self.minted = app, admin_id, 0
        self.headers = self.mint()

    def mint(self) -> dict:
        from core.appdb.models import User
        from core.appdb.models.user import ADMIN_GROUP_ID
        from plugins.api_keys import service

        state = self.app.extensions["tessera"]
        self.minted += 1
        with self.app.app_context(), state.db.session() as session:
            key = service.create_key(session, session.get(User, self.admin_id), f"fuzz key {self.minted}",
                                     ADMIN_GROUP_ID)
        self.key_id = key["id"]
        return {"X-API-KEY": key["unmasked_key"]}

    def ensure(self) -> None:
        """A new key when the current one no longer makes a superuser. Asked of the api_keys plugin's
        user_for_key, which a request's authentication asks, in the app DB: a GET /api/user/current after
        every example cost as much as a third of the fuzzing."""
        from plugins.api_keys import service

        state = self.app.extensions["tessera"]
        with self.app.app_context(), state.db.session() as session:
            user = service.user_for_key(session, self.headers["X-API-KEY"])
            superuser = user is not None and user.is_superuser
        if not superuser:
            self.headers = self.mint()


def strategy(operation, ids: dict):
    """Valid and invalid examples, and valid ones whose path ids name existing objects."""
    from hypothesis import strategies as st
    from schemathesis import GenerationMode

    strategies = [operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE)]
    kinds = {**PARAM_KIND, "id": ID_KIND.get(operation.path.split("/")[2])}
    known = {parameter.name: ids[kinds[parameter.name]] for parameter in operation.path_parameters
             if kinds.get(parameter.name) in ids}
    known.update({parameter.name: PARAM_VALUE[parameter.name] for parameter in operation.path_parameters
                  if parameter.name in PARAM_VALUE})
    known = {name: str(value) if name.endswith("_or_query") else value for name, value in known.items()}
    if known:
        strategies.append(operation.as_strategy(GenerationMode.POSITIVE, path_parameters=known))
    return st.one_of(strategies)


def fuzz(operation, ids: dict, credentials: Credentials) -> list[int]:
    """Run the operation's examples; returns the statuses answered, raises ServerError on a 5xx."""
    from hypothesis import HealthCheck, Phase, given, settings

    statuses = []

    @settings(max_examples=EXAMPLES_PER_OPERATION, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck), print_blob=False)
    @given(case=strategy(operation, ids))
    def run(case):
        response = case.call(headers=credentials.headers)
        statuses.append(response.status_code)
        if response.status_code >= 500:
            raise ServerError(f"{operation.label} -> {response.status_code} {response.text[:300]}\n"
                              f"    reproduce: {case.as_curl_command(headers=credentials.headers)}")
        credentials.ensure()

    run()
    return statuses


@pytest.fixture
def fuzzed_app(app, admin, sample_database_file):
    response = admin.post("/api/database/sample_database")
    assert response.status_code == 200, response.json
    wait_for_sync(app)
    return app, create_content(app, admin)


# The operations are fuzzed in shards, each on an app of its own, so that pytest-xdist spreads them
# over the workers (one test of every operation ran for a minute or more, often last).
SHARDS = 4


def shard_of(documented: set, shard: int) -> set:
    """Every SHARDS-th operation in (method, path) order, from the shard-th: the shards cover them all once."""
    return {key for i, key in enumerate(sorted(documented - EXCLUDED)) if i % SHARDS == shard}


def test_the_shards_cover_every_operation_once():
    documented = {("GET", f"/api/x{i}") for i in range(10)} | EXCLUDED
    parts = [shard_of(documented, shard) for shard in range(SHARDS)]
    assert set().union(*parts) == documented - EXCLUDED and sum(map(len, parts)) == 10


@pytest.mark.security_row(26)
@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_operation_answers_5xx(fuzzed_app, admin, shard):
    import schemathesis

    app, ids = fuzzed_app
    credentials = Credentials(app, admin.user["id"])
    ids = {**ids, "api_key": credentials.key_id}  # regenerate and delete aim at the run's own key
    client = app.test_client()
    document = client.get("/api/docs/openapi.json").json
    # Loaded from the dict rather than with from_wsgi, which leaves out the document's own operation.
    schema = schemathesis.openapi.from_dict(document)
    schema.app = app
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    mine = shard_of(documented, shard)
    tested, succeeded, failures, started = set(), set(), [], time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        key = (operation.method.upper(), operation.path)
        if key not in mine:
            continue
        try:
            statuses = fuzz(operation, ids, credentials)
            assert statuses, f"{operation.label}: no example was sent"
            if min(statuses) < 300:
                succeeded.add(key)
        except ServerError as error:
            failures.append(str(error))
            credentials.ensure()
        tested.add(key)
    elapsed = time.monotonic() - started
    print(f"shard {shard}: fuzzed {len(tested)} operations in {elapsed:.0f} s, {len(succeeded)} with a 2xx; "
          f"{credentials.minted - 1} key re-mints")
    assert tested == mine
    # The key authenticates and ids resolve: a fair share of operations got a 2xx (74 of 188 when written;
    # random bodies and ids mostly earn 400/404, and deletes run after others have removed their objects).
    assert len(succeeded) >= len(tested) * 0.3, sorted(tested - succeeded)
    assert not failures, "5xx answers:\n" + "\n".join(failures)
