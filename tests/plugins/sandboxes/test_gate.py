"""The oracle: every path data leaves by returns, for a sandboxed user, exactly what the reference SQL
with the sandbox's filter returns, never another state's rows or the dropped column."""
from tests.plugins.sandboxes.conftest import ok


def mbql(world, inner):
    return {"database": world.db, "type": "query", "query": inner}


def rows(client, query):
    return ok(client.post("/api/dataset", json=query))["data"]["rows"]


def test_ad_hoc_counts_follow_the_attribute(world, reference):
    people = world.tables["PEOPLE"]
    for client, state in ((world.tx, "TX"), (world.ca, "CA")):
        got = rows(client, mbql(world, {"source-table": people, "aggregation": [["count"]]}))
        assert got == [[reference("SELECT COUNT(*) FROM PEOPLE WHERE STATE = ?", state)[0][0]]]
    assert rows(world.admin, mbql(world, {"source-table": people, "aggregation": [["count"]]})) == \
        [[reference("SELECT COUNT(*) FROM PEOPLE")[0][0]]]
