"""Request parsing: Metabase's 400 shape, query strings, form bodies, the notation table's types."""
import pytest

from tests.support import write_plugin

ECHO = '''
from typing import Any
from pydantic import ConfigDict
from core import hookimpl
from core.http.api import Api, Params
from core.http.types import BoolStr, Bool, Email, Enum, JsonStr, Map, NonBlankStr, PositiveInt, Str

api = Api("echo", __name__, url_prefix="/echo", auth="public")

class Path(Params):
    id: PositiveInt

class Query(Params):
    flag: BoolStr | None = None
    include: Enum("tables", "tables.fields", nullable=True) = None
    models: list[Str] = []
    archived: Bool | None = None

class Inner(Params):
    email: Email

class Strict(Params):
    model_config = ConfigDict(extra="forbid")
    method: NonBlankStr

class Body(Params):
    name: NonBlankStr
    settings: Map | None = None
    payload: JsonStr | None = None
    user: Inner | None = None
    template: Strict | None = None
    ids: list[PositiveInt] = []
    users: list[Inner] = []

@api.get("/<id>", path=Path, query=Query)
def read(path, query):
    return {"id": path.id, **query.model_dump()}

@api.post("/", body=Body)
def write(body):
    return body.model_dump()

@hookimpl
def register_routes():
    return [api]
'''


@pytest.fixture
def echo(app_config, tmp_path, monkeypatch):
    from core.assembly.app import create_app
    from core.testing import ApiClient

    name = write_plugin(tmp_path, monkeypatch, ECHO)
    return ApiClient(create_app({**app_config, "TESSERA_PLUGINS_EXTRA": name}))


def test_missing_non_blank_string(echo):
    response = echo.post("/api/echo", json={})
    assert response.status_code == 400
    assert response.json == {
        "errors": {"name": "value must be a non-blank string."},
        "specific-errors": {"name": ["should be a string, received: nil", "non-blank string, received: nil"]},
    }


def test_blank_string(echo):
    response = echo.post("/api/echo", json={"name": "   "})
    assert response.json["errors"] == {"name": "value must be a non-blank string."}
    assert response.json["specific-errors"]["name"][1] == 'non-blank string, received: "   "'


def test_positive_int_path(echo):
    response = echo.get("/api/echo/0")
    assert response.status_code == 400
    assert response.json["errors"] == {"id": "value must be an integer greater than zero."}
    assert echo.get("/api/echo/abc").status_code == 400
    assert echo.get("/api/echo/7").json["id"] == 7


def test_enum_error_text(echo):
    response = echo.get("/api/echo/1?include=schemas")
    assert response.status_code == 400
    assert response.json["errors"] == {"include": "nullable enum of tables, tables.fields"}
    assert response.json["specific-errors"]["include"] == [
        'should be either "tables" or "tables.fields", received: "schemas"']


def test_boolstr_only_true_or_false(echo):
    assert echo.get("/api/echo/1?flag=true").json["flag"] is True
    assert echo.get("/api/echo/1?flag=false").json["flag"] is False
    response = echo.get("/api/echo/1?flag=yes")
    assert response.status_code == 400
    assert "flag" in response.json["errors"]


def test_query_bool_accepts_text(echo):
    assert echo.get("/api/echo/1?archived=true").json["archived"] is True


def test_repeated_query_parameters_become_a_list(echo):
    response = echo.get("/api/echo/1?models=card&models=dashboard")
    assert response.json["models"] == ["card", "dashboard"]
    assert echo.get("/api/echo/1?models=card").json["models"] == ["card"]


def test_map_and_jsonstr(echo):
    ok = echo.post("/api/echo", json={"name": "n", "settings": {"a": 1}, "payload": "[1, 2]"})
    assert ok.status_code == 200
    assert ok.json["settings"] == {"a": 1} and ok.json["payload"] == [1, 2]
    bad = echo.post("/api/echo", json={"name": "n", "settings": [1], "payload": "{oops"})
    assert bad.status_code == 400
    assert bad.json["errors"] == {"settings": "nullable Value must be a map.",
                                  "payload": "nullable value must be a valid JSON string."}


def test_nested_errors_nest_and_drop_indexes(echo):
    response = echo.post("/api/echo", json={"name": "n", "user": {"email": "nope"}, "ids": [1, -2]})
    assert response.status_code == 400
    assert response.json["errors"]["user"] == {"email": "value must be a valid email address."}
    assert response.json["errors"]["ids"] == "value must be an integer greater than zero."


def test_form_encoded_body_with_json_fields(echo):
    response = echo.post("/api/echo", data={"name": "form", "settings": '{"x": true}'})
    assert response.status_code == 200
    assert response.json["name"] == "form"
    assert response.json["settings"] == {"x": True}


def test_unknown_keys_are_ignored(echo):
    response = echo.post("/api/echo", json={"name": "n", "id": 5, "created_at": "2020-01-01"})
    assert response.status_code == 200


def test_non_object_body_is_400(echo):
    response = echo.post("/api/echo", json=[1, 2])
    assert response.status_code == 400


def test_unknown_key_inside_a_nested_object_is_named_under_its_parent(echo):
    # A nested object with both a missing field and an unknown key used to crash the error builder (500).
    response = echo.post("/api/echo", json={"name": "x", "template": {"zzz": 1}})
    assert response.status_code == 400
    assert set(response.json["errors"]["template"]) == {"method", "zzz"}
    assert set(response.json["specific-errors"]["template"]) == {"method", "zzz"}


@pytest.mark.parametrize("users", [[{"email": "bad"}, "x"], ["x", {"email": "bad"}]])
def test_an_error_on_a_key_and_one_inside_it_keep_the_inner_one_in_either_order(echo, users):
    # A list whose items fail both as a whole and in a field used to crash the error builder (500).
    response = echo.post("/api/echo", json={"name": "x", "users": users})
    assert response.status_code == 400
    assert set(response.json["errors"]["users"]) == {"email"}
    assert list(response.json["specific-errors"]["users"]) == ["email"]
