"""Bad input at the request layer: out-of-range integers, deep JSON, invalid Unicode, absurd binning,
name collisions and oversized bodies get a 4xx in Metabase's error shape, never a 500; unexpected
errors keep Metabase's 500 shape and carry a request id."""
import base64
import json
import re
import time
import typing

import pydantic
import pytest
from sqlalchemy import update

from core.testing import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.plugins.dataset.conftest import make_orders

PARAM = re.compile(r"<(?:[a-z_]+:)?([A-Za-z0-9_-]+)>")
HUGE = (str(2**64), str(10**30), "9" * 5000)
A_UUID = "8c1f6b4e-2a0d-4f5e-9b3a-6d7c8e9f0a1b"  # a well-formed public link that names nothing


@pytest.fixture
def orders(app, admin):
    return make_orders(app, count=200)


def _is_int(info) -> bool:
    annotation = info.annotation
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation is int


def _plausible(name, info) -> str:
    """A valid value for a non-integer path parameter: a UUID for a public link, an enum's first member,
    else a word."""
    if name == "uuid":
        return A_UUID
    annotation = info.annotation if info is not None else str
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return str(typing.get_args(annotation)[0])
    return "x"


def _int_routes(app):
    """(method, rule, int-typed path params, other params) of every registered rule with a path
    parameter, read from the URL map; the types come from the endpoint's declared path model."""
    endpoints = {(e.method, e.full_rule.rstrip("/")): e for e in app.extensions["tessera"].endpoints}
    routes = []
    for rule in app.url_map.iter_rules():
        names = PARAM.findall(rule.rule)
        if not names or not rule.rule.startswith("/api/"):
            continue
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            endpoint = endpoints[(method, rule.rule.rstrip("/"))]
            fields = {info.alias or name: info for name, info in endpoint.path.model_fields.items()}
            int_names = [n for n in names if n in fields and _is_int(fields[n])]
            if int_names:
                others = {n: _plausible(n, fields.get(n)) for n in names if n not in int_names}
                routes.append((method, rule.rule, int_names, others))
    return routes


def test_ids_beyond_bigint_in_paths_are_404(app, admin):
    routes = _int_routes(app)
    assert len(routes) > 90  # the walk covers the id routes, not a sample of them
    wrong = []
    for method, rule, int_names, others in routes:
        for big in HUGE:
            url = rule
            for name in int_names:
                url = url.replace(f"<{name}>", str(big))
            for name, value in others.items():  # a valid value for the other parameters (keys, formats)
                url = url.replace(f"<{name}>", value)
            response = admin.request(method, url, json={})
            if response.status_code != 404:
                wrong.append((method, url, response.status_code, response.get_data(as_text=True)[:120]))
    assert not wrong, wrong[:10]


# Path values to try, in order, until the path model accepts one: an id, a public link, an x-ray entity or
# rule prefix, a rule name, an x-ray cell (base64 JSON).
PATH_CANDIDATES = ("1", A_UUID, "table", "GenericTable", base64.urlsafe_b64encode(b'["=", 1, 1]').decode())


def _valid_path_value(endpoint, name: str) -> str:
    """A path value the path model accepts, so that only the query string is wrong: an enum's first
    value (an export format), else the first of PATH_CANDIDATES the model takes for `name`."""
    field = endpoint.path.model_fields.get(name) if endpoint.path is not None else None
    if field is None:
        return "1"
    for arg in typing.get_args(field.annotation):
        if typing.get_origin(arg) is typing.Literal:
            return str(typing.get_args(arg)[0])
    if typing.get_origin(field.annotation) is typing.Literal:
        return str(typing.get_args(field.annotation)[0])
    key = field.alias or name
    for candidate in PATH_CANDIDATES:
        try:
            endpoint.path.model_validate({key: candidate})
        except pydantic.ValidationError as error:
            if any(e["loc"] and e["loc"][0] == key for e in error.errors()):
                continue
        return candidate
    return "1"


def test_integers_beyond_bigint_in_query_strings_are_400(app, admin):
    checked = 0
    wrong = []
    for endpoint in app.extensions["tessera"].endpoints:
        if endpoint.query is None:
            continue
        for name, info in endpoint.query.model_fields.items():
            annotation = str(info.annotation) + str(info.metadata)
            if "int" not in annotation or "Literal" in annotation:
                continue
            key = info.alias or name
            url = PARAM.sub(lambda match: _valid_path_value(endpoint, match.group(1)), endpoint.full_rule)
            for big in HUGE:
                checked += 1
                response = admin.request(endpoint.method, url, query_string={key: str(big)})
                body = response.json
                if response.status_code != 400 or key not in body.get("errors", {}) or \
                        key not in body.get("specific-errors", {}):
                    wrong.append((endpoint.method, url, key, response.status_code, body))
    assert checked >= 20
    assert not wrong, wrong[:10]


def test_huge_time_interval_amount_is_400(admin, orders):
    query = {"database": orders.database_id, "type": "query", "query": {
        "source-table": orders.table_id, "aggregation": [["count"]],
        "filter": ["time-interval", ["field", orders.fields["created_at"], None], 10**30, "day"]}}
    response = admin.post("/api/dataset", json=query)
    assert response.status_code == 400
    assert "outside the years" in response.json["error"]


def test_deep_json_body_is_400(admin):
    deep = "[" * 1000 + "]" * 1000
    response = admin.post("/api/collection", data=f'{{"name": "x", "description": {deep}}}',
                          content_type="application/json")
    assert response.status_code == 400
    assert "nest" in json.dumps(response.json)


def test_deep_json_in_a_form_field_is_400(admin, orders):
    clause = '["+", ' * 1000 + f'["field", {orders.fields["price"]}, null]' + ', 1]' * 1000
    query = (f'{{"database": {orders.database_id}, "type": "query", '
             f'"query": {{"source-table": {orders.table_id}, "expressions": {{"deep": {clause}}}}}}}')
    response = admin.post("/api/dataset/json", data={"query": query})
    assert response.status_code == 400
    assert response.json["errors"] == {"query": "value must be a valid JSON string."}


def test_deep_mbql_within_the_body_limit_is_400(admin, orders):
    clause = ["field", orders.fields["price"], None]
    for _ in range(55):  # under the body's 64 levels, over MBQL's
        clause = ["+", clause, 1]
    query = {"database": orders.database_id, "type": "query",
             "query": {"source-table": orders.table_id, "expressions": {"deep": clause}}}
    response = admin.post("/api/dataset", json=query)
    assert response.status_code == 400
    assert "MBQL" in json.dumps(response.json) and "nest" in json.dumps(response.json)


def test_deep_mbql_is_refused_by_normalisation():
    from core.http.errors import Invalid
    from core.query.mbql import normalize

    filter_ = ["=", ["field", 1, None], 1]
    for _ in range(200):
        filter_ = ["and", filter_, ["=", ["field", 1, None], 2]]
    with pytest.raises(Invalid, match="nest"):
        normalize({"database": 1, "type": "query", "query": {"source-table": 1, "filter": filter_}})


def test_lone_surrogates_are_400(admin):
    response = admin.post("/api/collection", data='{"name": "bad \\ud800 name"}', content_type="application/json")
    assert response.status_code == 400
    response = admin.post("/api/card", data='{"name": "c", "display": "table", "visualization_settings": {}, '
                          '"dataset_query": {"database": 1, "type": "native", "native": {"query": "select \\udfff"}}}',
                          content_type="application/json")
    assert response.status_code == 400
    assert admin.get("/api/search?q=%ED%A0%80").status_code == 400
    assert admin.get("/api/user/%ED%A0%80").status_code == 400
    assert "bad" not in json.dumps(admin.get("/api/collection").json)


def _orders_with_fingerprint(app, orders):
    from core.appdb.models import Field

    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session:
        session.execute(update(Field).where(Field.id == orders.fields["price"]).values(
            fingerprint={"type": {"type/Number": {"min": 1.25, "max": 3125.0}}}))
        session.commit()


@pytest.mark.parametrize("binning", [
    {"strategy": "bin-width", "bin-width": 1e-300},
    {"strategy": "bin-width", "bin-width": 1e-9},
    {"strategy": "num-bins", "num-bins": 10**6},
])
def test_absurd_binning_is_400(app, admin, orders, binning):
    _orders_with_fingerprint(app, orders)
    query = {"database": orders.database_id, "type": "query", "query": {
        "source-table": orders.table_id, "aggregation": [["count"]],
        "breakout": [["field", orders.fields["price"], {"binning": binning}]]}}
    response = admin.post("/api/dataset", json=query)
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    assert "bin" in json.dumps(response.json)


def test_sensible_binning_still_works(app, admin, orders):
    _orders_with_fingerprint(app, orders)
    query = {"database": orders.database_id, "type": "query", "query": {
        "source-table": orders.table_id, "aggregation": [["count"]],
        "breakout": [["field", orders.fields["price"], {"binning": {"strategy": "bin-width", "bin-width": 500}}]]}}
    response = admin.post("/api/dataset", json=query)
    assert response.status_code == 202 and response.json["status"] == "completed", response.json
    assert sum(row[1] for row in response.json["data"]["rows"]) == orders.count


@pytest.mark.parametrize("first, second", [("Ärzte", "ärzte"), ("ÉQUIPE", "équipe"), ("Straße", "STRASSE")])
def test_group_names_collide_case_insensitively(admin, first, second):
    assert admin.post("/api/permissions/group", json={"name": first}).status_code == 200
    response = admin.post("/api/permissions/group", json={"name": second})
    assert response.status_code == 400, response.json
    assert "name" in response.json["errors"]
    assert [g["name"] for g in admin.get("/api/permissions/group").json].count(first) == 1


@pytest.mark.parametrize("message, status, body", [
    ("UNIQUE constraint failed: permissions_group.name", 409, {"errors": {"name": "value must be unique."}}),
    ('duplicate key value violates unique constraint "uq_permissions_group_name"\n'
     "DETAIL:  Key (name)=(Ärzte) already exists.", 409, {"errors": {"name": "value must be unique."}}),
    ("NOT NULL constraint failed: report_card.name", 400, {"errors": {"name": "value violates a constraint."}}),
    ('duplicate key value violates unique constraint "m"\nDETAIL:  Key (user_id, group_id)=(1, 2) already exists.',
     409, "A value is already taken."),
])
def test_integrity_errors_are_4xx_naming_the_field_not_the_sql(app_config, message, status, body):
    from sqlalchemy.exc import IntegrityError

    from core.assembly.app import create_app
    from core.http.api import Api

    app = create_app(app_config)
    probe = Api("integrity_probe", __name__, "/integrity-probe", auth="public")

    @probe.post("")
    def clash():
        raise IntegrityError("INSERT INTO secret_table", {}, Exception(message))

    app.register_blueprint(probe, url_prefix="/api/integrity-probe")
    response = app.test_client().post("/api/integrity-probe", json={})
    assert response.status_code == status
    assert "secret_table" not in response.get_data(as_text=True)
    assert response.json == body
    app.extensions["tessera"].db.dispose()


def test_unexpected_errors_keep_the_500_shape_and_a_request_id(app_config, caplog):
    from core.assembly.app import create_app
    from core.http.api import Api

    app = create_app(app_config)
    probe = Api("boom_probe", __name__, "/boom-probe", auth="public")

    @probe.get("")
    def boom():
        raise RuntimeError("secret detail")

    app.register_blueprint(probe, url_prefix="/api/boom-probe")
    response = app.test_client().get("/api/boom-probe")
    assert response.status_code == 500
    text = response.get_data(as_text=True)
    assert "secret detail" not in text and "Traceback" not in text
    assert response.json["message"] == "Internal server error."
    request_id = response.headers["X-Request-Id"]
    assert request_id and request_id in caplog.text
    ok = app.test_client().get("/api/health")
    assert ok.headers["X-Request-Id"] and ok.headers["X-Request-Id"] != request_id
    app.extensions["tessera"].db.dispose()


class CountingBody:
    """A request body of `size` bytes that counts what the server reads."""

    def __init__(self, size: int):
        self.size = size
        self.read_bytes = 0

    def read(self, n: int = -1) -> bytes:
        n = self.size - self.read_bytes if n is None or n < 0 else min(n, self.size - self.read_bytes)
        self.read_bytes += n
        return b" " * n

    def readline(self, n: int = -1) -> bytes:
        return self.read(n)



def post_stream(app, path: str, body: CountingBody, chunked: bool = False):
    """POST body to the WSGI app as a server would hand it over: with its Content-Length, or chunked
    (no length; the server marks the input as terminated). Returns (status code, JSON body)."""
    from werkzeug.test import EnvironBuilder, run_wsgi_app

    environ = EnvironBuilder(path=path, method="POST", content_type="application/json").get_environ()
    environ["wsgi.input"] = body
    if chunked:
        environ.pop("CONTENT_LENGTH", None)
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = str(body.size)
    app_iter, status, _headers = run_wsgi_app(app, environ, buffered=True)
    return int(status.split()[0]), json.loads(b"".join(app_iter))


def test_50mb_login_body_is_413_without_reading_it(app, admin):
    body = CountingBody(50 * 1024 * 1024)
    started = time.perf_counter()
    status, answer = post_stream(app, "/api/session", body)
    assert status == 413
    assert body.read_bytes == 0
    assert time.perf_counter() - started < 1
    assert isinstance(answer, str) and "large" in answer


def test_chunked_body_over_the_limit_is_413(app_config):
    from core.assembly.app import create_app

    app = create_app({**app_config, "TESSERA_MAX_BODY_BYTES": 1024})
    body = CountingBody(64 * 1024)
    status, answer = post_stream(app, "/api/session", body, chunked=True)
    assert status == 413 and "large" in answer
    assert body.read_bytes <= 2048
    ok = app.test_client().post("/api/session", json={"username": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert ok.status_code != 413
    app.extensions["tessera"].db.dispose()


@pytest.mark.parametrize("url, body", [
    ("/api/card", {"display": "table", "visualization_settings": {},
                   "dataset_query": {"database": 1, "type": "native", "native": {"query": "select 1"}}}),
    ("/api/collection", {}),
    ("/api/permissions/group", {}),
])
def test_names_longer_than_254_characters_are_400(admin, url, body):
    response = admin.post(url, json={**body, "name": "n" * 255})
    assert response.status_code == 400, response.json
    assert "name" in response.json["errors"]
    assert "254" in response.json["errors"]["name"]


def test_descriptions_are_bounded(admin):
    response = admin.post("/api/collection", json={"name": "ok", "description": "d" * (64 * 1024 + 1)})
    assert response.status_code == 400
    assert "description" in response.json["errors"]
    assert admin.post("/api/collection", json={"name": "n" * 254, "description": "d" * 1000}).status_code == 200


@pytest.mark.parametrize("token", [f"{2**64}_abc", f"{10**30}_abc", "²_abc"])
def test_reset_tokens_with_impossible_ids_are_just_invalid(client, admin, token):
    response = client.get("/api/session/password_reset_token_valid", query_string={"token": token})
    assert response.status_code == 200 and response.json == {"valid": False}


def test_integers_beyond_bigint_in_bodies_are_400(admin):
    response = admin.post("/api/dataset", json={"database": 2**64, "type": "native", "native": {"query": "select 1"}})
    assert response.status_code == 400 and "database" in response.json["errors"]
    response = admin.post("/api/collection", json={"name": "c", "parent_id": 10**30})
    assert response.status_code == 400 and "parent_id" in response.json["errors"]
