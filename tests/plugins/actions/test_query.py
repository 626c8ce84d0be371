"""Query actions on SQLite, PostgreSQL and MariaDB: the native write statement with its template tags bound
as parameters (never spliced), optional clauses, a missing required value, one transaction: a failed
statement leaves the table as it was."""
import time

import pytest
from sqlalchemy import create_engine, text

from .support import param, query_action, tag


def set_age(admin, shop, sql="UPDATE people SET age = {{age}} WHERE id = {{id}}[[ AND name = {{name}}]]"):
    response = query_action(admin, shop.model, shop.db, sql,
                            {"age": tag("age", "number", required=True), "id": tag("id", "number", required=True),
                             "name": tag("name")},
                            [param("age", "number/="), param("id", "number/="), param("name")])
    assert response.status_code == 200, response.json
    return response.json["id"]


def test_write_with_bound_parameters(admin, shop):
    action = set_age(admin, shop)
    ran = admin.post(f"/api/action/{action}/execute", json={"parameters": {"age": 50, "id": 1}})
    assert ran.status_code == 200 and ran.json == {"rows-affected": 1}
    assert shop.rows("SELECT age FROM people WHERE id = 1") == [(50,)]
    # The optional clause applies only with its value: a name that does not match touches nothing.
    ran = admin.post(f"/api/action/{action}/execute", json={"parameters": {"age": 60, "id": 1, "name": "Alan"}})
    assert ran.json == {"rows-affected": 0}
    assert shop.rows("SELECT age FROM people WHERE id = 1") == [(50,)]
    odd = admin.post(f"/api/action/{action}/execute",
                     json={"parameters": {"age": 1, "id": 1, "name": "Ada' OR '1'='1"}})
    assert odd.json == {"rows-affected": 0}
    assert shop.rows("SELECT count(*) FROM people WHERE age = 1") == [(0,)]
    missing = admin.post(f"/api/action/{action}/execute", json={"parameters": {"id": 1}})
    assert missing.status_code == 400 and "missing required parameters" in missing.json
    unknown = admin.post(f"/api/action/{action}/execute", json={"parameters": {"id": 1, "age": 2, "x": 3}})
    assert unknown.status_code == 400
    assert unknown.json["message"].startswith('No destination parameter found for #{"x"}')


def test_a_failed_statement_changes_nothing(admin, shop):
    before = shop.rows("SELECT id, name, age FROM people ORDER BY id")
    # The first rows are updated before the NULL name breaks the NOT NULL constraint.
    sql = "UPDATE people SET age = age + 1, name = CASE WHEN id = 3 THEN NULL ELSE name END WHERE id <= {{n}}"
    response = query_action(admin, shop.model, shop.db, sql, {"n": tag("n", "number")}, [param("n", "number/=")])
    failed = admin.post(f"/api/action/{response.json['id']}/execute", json={"parameters": {"n": 3}})
    assert failed.status_code == 400 and failed.json["message"]
    assert shop.rows("SELECT id, name, age FROM people ORDER BY id") == before
    # Two statements in one action are refused, and the first does not run either.
    two = query_action(admin, shop.model, shop.db, "DELETE FROM people WHERE id = {{n}}; DELETE FROM twins",
                       {"n": tag("n", "number")}, [param("n", "number/=")])
    refused = admin.post(f"/api/action/{two.json['id']}/execute", json={"parameters": {"n": 1}})
    assert refused.status_code == 400
    assert shop.rows("SELECT id, name, age FROM people ORDER BY id") == before
    assert len(shop.rows("SELECT * FROM twins")) == 2


def test_query_actions_cannot_read_other_questions(admin, shop):
    sql = "INSERT INTO twins (id, name) SELECT id, name FROM {{#%d-m}} AS m" % shop.model
    tags = {f"#{shop.model}-m": {"id": "c", "name": f"#{shop.model}-m", "display-name": "m", "type": "card",
                                 "card-id": shop.model}}
    action = query_action(admin, shop.model, shop.db, sql, tags, [])
    refused = admin.post(f"/api/action/{action.json['id']}/execute", json={"parameters": {}})
    assert refused.status_code == 400 and "other questions" in refused.json
    assert len(shop.rows("SELECT * FROM twins")) == 2


def test_authoring_needs_native_permission(app, admin, user, shop):
    graph = admin.get("/api/permissions/graph").json
    all_users = next(g["id"] for g in admin.get("/api/permissions/group").json if g["name"] == "All Users")
    graph["groups"][str(all_users)][str(shop.db)] = {"view-data": "unrestricted", "create-queries": "query-builder"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    refused = query_action(user, shop.model, shop.db, "DELETE FROM people", {}, [])
    assert refused.status_code == 403


def test_a_statement_past_the_query_timeout_is_stopped_and_undone(admin, shop):
    settings = {"database-enable-actions": True, "query-timeout-seconds": 1}
    assert admin.put(f"/api/database/{shop.db}", json={"settings": settings}).status_code == 200
    slow = {"sqlite": "UPDATE people SET age = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                      "WHERE x < 100000000) SELECT count(*) FROM c) WHERE id = {{n}}",
            "postgres": "UPDATE people SET age = 0 WHERE id = {{n}} AND pg_sleep(30) IS NOT NULL",
            "mysql": "UPDATE people SET age = 0 WHERE id = {{n}} AND SLEEP(30) = 0"}[shop.engine]
    action = query_action(admin, shop.model, shop.db, slow, {"n": tag("n", "number")}, [param("n", "number/=")])
    started = time.monotonic()
    stopped = admin.post(f"/api/action/{action.json['id']}/execute", json={"parameters": {"n": 1}})
    assert stopped.status_code == 400 and time.monotonic() - started < 15
    assert shop.rows("SELECT age FROM people WHERE id = 1") == [(36,)]


def test_editing_the_sql_needs_native_permission_renaming_does_not(app, admin, user, shop):
    action = set_age(admin, shop)
    graph = admin.get("/api/permissions/graph").json
    all_users = next(g["id"] for g in admin.get("/api/permissions/group").json if g["name"] == "All Users")
    graph["groups"][str(all_users)][str(shop.db)] = {"view-data": "unrestricted", "create-queries": "query-builder"}
    assert admin.put("/api/permissions/graph", json=graph).status_code == 200
    assert user.put(f"/api/action/{action}", json={"name": "Renamed"}).status_code == 200
    sql = {"database": shop.db, "type": "native", "native": {"query": "DELETE FROM people"}}
    assert user.put(f"/api/action/{action}", json={"dataset_query": sql}).status_code == 403
    assert admin.get(f"/api/action/{action}").json["dataset_query"]["native"]["query"].startswith("UPDATE")


@pytest.mark.parametrize("shop", ["mysql"], indirect=True)
def test_mysql_writes_are_stopped_without_a_server_statement_timeout(admin, shop, monkeypatch):
    """MySQL's own timeout stops SELECTs only; Tessera stops a write (a slow one, or one waiting on a row
    lock) itself. Run on MariaDB with its max_statement_time left unused, as on MySQL."""
    from drivers.mysql import MySQLDriver

    monkeypatch.setattr(MySQLDriver, "server_stops_writes", classmethod(lambda cls, raw: False))
    settings = {"database-enable-actions": True, "query-timeout-seconds": 1}
    assert admin.put(f"/api/database/{shop.db}", json={"settings": settings}).status_code == 200
    slow = query_action(admin, shop.model, shop.db, "UPDATE people SET age = 0 WHERE id = {{n}} AND SLEEP(30) = 0",
                        {"n": tag("n", "number")}, [param("n", "number/=")]).json["id"]
    started = time.monotonic()
    stopped = admin.post(f"/api/action/{slow}/execute", json={"parameters": {"n": 1}})
    assert stopped.status_code == 400 and time.monotonic() - started < 10, stopped.json
    assert stopped.json["message"].startswith("Query exceeded the timeout")
    assert shop.rows("SELECT age FROM people WHERE id = 1") == [(36,)]

    set_age_action = set_age(admin, shop)
    holder = create_engine(shop.url)
    with holder.connect() as conn:
        conn.execute(text("SELECT * FROM people WHERE id = 2 FOR UPDATE"))  # holds the row until rollback
        started = time.monotonic()
        waited = admin.post(f"/api/action/{set_age_action}/execute", json={"parameters": {"age": 1, "id": 2}})
        assert waited.status_code == 400 and time.monotonic() - started < 10, waited.json
        assert waited.json["message"].startswith("Query exceeded the timeout")
        conn.rollback()
    holder.dispose()
    assert shop.rows("SELECT age FROM people WHERE id = 2") == [(41,)]
    # The pool's connections stay usable, read-only again and without a deadline left armed.
    time.sleep(1.5)
    ran = admin.post(f"/api/action/{set_age_action}/execute", json={"parameters": {"age": 42, "id": 2}})
    assert ran.status_code == 200 and ran.json == {"rows-affected": 1}
    assert shop.rows("SELECT age FROM people WHERE id = 2") == [(42,)]
