"""Implicit actions (row/create, row/update, row/delete) on SQLite, PostgreSQL and MariaDB: slugified field
names to columns, the primary key required, exactly one row or a 400 with the row count (and nothing
changed), Metabase's result shapes; the prefill of an update form."""
import orjson

from .support import implicit, make_model

PEOPLE = "SELECT id, name, age FROM people ORDER BY id"


def test_create_update_delete(admin, shop):
    create = implicit(admin, shop.model, "row/create").json
    assert {"name", "age"} <= {p["id"] for p in create["parameters"]}
    made = admin.post(f"/api/action/{create['id']}/execute", json={"parameters": {"name": "Edsger", "age": 72}})
    assert made.status_code == 200, made.json
    row = made.json["created-row"]
    assert row["name"] == "Edsger" and row["age"] == 72 and row["id"] == 4
    assert shop.rows(PEOPLE)[-1] == (4, "Edsger", 72)

    update = implicit(admin, shop.model, "row/update").json
    done = admin.post(f"/api/action/{update['id']}/execute", json={"parameters": {"id": 2, "age": 42}})
    assert done.status_code == 200 and done.json == {"rows-updated": [1]}
    assert shop.rows("SELECT name, age FROM people WHERE id = 2") == [("Alan", 42)]

    delete = implicit(admin, shop.model, "row/delete").json
    assert [p["id"] for p in delete["parameters"]] == ["id"]
    gone = admin.post(f"/api/action/{delete['id']}/execute", json={"parameters": {"id": 4}})
    assert gone.status_code == 200 and gone.json == {"rows-deleted": [1]}
    assert [r[0] for r in shop.rows(PEOPLE)] == [1, 2, 3]


def test_refusals_change_nothing(admin, shop):
    before = shop.rows(PEOPLE)
    update = implicit(admin, shop.model, "row/update").json
    delete = implicit(admin, shop.model, "row/delete").json
    create = implicit(admin, shop.model, "row/create").json

    def run(action, parameters):
        return admin.post(f"/api/action/{action['id']}/execute", json={"parameters": parameters})

    missing = run(update, {"age": 1})
    assert missing.status_code == 400 and missing.json == 'Missing primary key parameter: "id"'
    unknown = run(update, {"id": 1, "shoe_size": 44})
    assert unknown.status_code == 400
    assert unknown.json["message"] == 'No destination parameter found for #{"shoe_size"}. Found: #{"age" "id" "name"}'
    nothing = run(update, {"id": 1})
    assert nothing.status_code == 400 and nothing.json == "Implicit parameters must be provided."
    absent = run(update, {"id": 99, "age": 1})
    assert absent.status_code == 400
    assert absent.json["message"] == "Sorry, the row you're trying to update doesn't exist"
    absent = run(delete, {"id": 99})
    assert absent.status_code == 400 and "delete doesn't exist" in absent.json["message"]
    # A NOT NULL column left empty: the engine's refusal, as a 400.
    refused = run(create, {"age": 3})
    assert refused.status_code == 400 and refused.json["message"]
    # A value is data, never SQL.
    odd = "x'); DROP TABLE people; --"
    assert run(update, {"id": 1, "name": odd}).status_code == 200
    assert shop.rows("SELECT name FROM people WHERE id = 1") == [(odd,)]
    assert shop.rows(PEOPLE)[1:] == before[1:]


def test_one_row_or_a_400_with_the_count(app, admin, shop):
    # A table whose declared key is not unique in the data: the update would touch two rows.
    fields = admin.get(f"/api/table/{shop.tables['twins']}/query_metadata").json["fields"]
    key = next(f for f in fields if f["name"].lower() == "id")
    assert admin.put(f"/api/field/{key['id']}", json={"semantic_type": "type/PK"}).status_code == 200
    model = make_model(admin, shop.db, shop.tables["twins"], name="Twins")
    update = implicit(admin, model, "row/update").json
    answer = admin.post(f"/api/action/{update['id']}/execute", json={"parameters": {"id": 1, "name": "c"}})
    assert answer.status_code == 400
    assert answer.json["message"] == "Sorry, this would update 2 rows, but you can only act on 1"
    assert shop.rows("SELECT name FROM twins ORDER BY name") == [("a",), ("b",)]
    delete = implicit(admin, model, "row/delete").json
    answer = admin.post(f"/api/action/{delete['id']}/execute", json={"parameters": {"id": 1}})
    assert answer.status_code == 400 and "would delete 2 rows" in answer.json["message"]
    assert len(shop.rows("SELECT * FROM twins")) == 2


def test_prefill(admin, shop):
    update = implicit(admin, shop.model, "row/update").json
    values = admin.get(f"/api/action/{update['id']}/execute",
                       query_string={"parameters": orjson.dumps({"id": 3}).decode()})
    assert values.status_code == 200, values.json
    assert values.json == {"id": 3, "name": "Grace", "age": 85}
    create = implicit(admin, shop.model, "row/create").json
    refused = admin.get(f"/api/action/{create['id']}/execute", query_string={"parameters": "{}"})
    assert refused.status_code == 400
    assert refused.json == "Values can only be fetched for actions that require a Primary Key."
