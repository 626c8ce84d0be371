"""Setup's optional last step, "Add your data": the first database, right after the first account was made
(its session signs the steps in, so "Test connection" and the save are the API's own, administrators only).

The connection form is generated from the engine's details model as GET /api/session/properties gives it
(`engines` -> `details-fields`, Metabase's shape); the fields post as `details.<name>`. The test is POST
/api/database/validate, the save POST /api/database (or POST /api/database/sample_database).
"""
from __future__ import annotations

from flask import Response, request

from core.http.internal import call

from . import render
from .render import go, page, signed_in_user
from .views import blueprint, fragment, posted, slug

DETAILS = "details."
# Field kinds of Metabase's details-fields drawn as a plain input of this type.
INPUT_TYPES = {"string": "text", "integer": "number", "password": "password", "secret": "password"}


def engines() -> list[dict]:
    """[{engine, name, fields}] of every engine this server can connect to, by display name."""
    found = render.properties().get("engines") or {}
    listed = [{"engine": engine, "name": info.get("driver-name") or engine, "fields": info.get("details-fields") or []}
              for engine, info in found.items() if isinstance(info, dict)]
    return sorted(listed, key=lambda e: e["name"].lower())


@blueprint.app_template_global("details_input_type")
def details_input_type(field: dict) -> str:
    return INPUT_TYPES.get(field.get("type"), "text")


def details_from(body: dict, fields: list[dict]) -> dict:
    """The posted `details.<name>` values as the engine's details: numbers as numbers, a checkbox not
    posted as false, empty values left out (the driver's defaults apply)."""
    details: dict = {}
    for field in fields:
        name, kind = field.get("name"), field.get("type")
        value = body.get(DETAILS + str(name))
        if kind == "boolean":
            details[name] = value in (True, "true", "on")
        elif value in (None, ""):
            continue
        elif kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit() \
                and len(value.strip()) < 19:  # past 64 bits it goes as typed: the API refuses it, JSON can't carry it
            details[name] = int(value)
        else:
            details[name] = value
    return details


def chosen(body: dict) -> tuple[dict | None, dict]:
    """(the engine chosen, its details) from a posted form."""
    engine = next((e for e in engines() if e["engine"] == body.get("engine")), None)
    return engine, details_from(body, engine["fields"]) if engine else {}


def administrator():
    """The signed-in administrator, or the API's 403 as a page."""
    user = signed_in_user()
    if not user.is_superuser:
        raise render.Failed(render.Answer(403, None))
    return user


@blueprint.get("/setup/database")
def data_step():
    user = administrator()
    return page("app/setup_database.html", name="setup-database", title="Add your data", user=user,
                engines=engines())


@blueprint.get("/setup/database/fields")
def engine_fields():
    administrator()
    engine = next((e for e in engines() if e["engine"] == request.args.get("engine")), None)
    return fragment("app/_engine_fields.html", engine=engine)


def error(status: int, message: str) -> Response:
    return fragment("app/_form_error.html", status=status, message=message)


@blueprint.post("/setup/database/validate")
def test_connection():
    administrator()
    body = posted()
    engine, details = chosen(body)
    if engine is None:
        return error(400, "Choose the kind of database first.")
    answer = call("POST", "/api/database/validate", json={"engine": engine["engine"], "details": details})
    if not answer.ok:
        return error(answer.status, answer.message or "The connection could not be tested.")
    if not answer.body.get("valid"):
        return error(400, answer.body.get("message") or "Tessera could not connect with these details.")
    return fragment("app/_form_done.html", message="Connected: these details work.")


def create_database() -> dict | Response:
    """POST /api/database with the posted form: the new database, or the form's error fragment (the
    setup step's and the admin page's one way to add a database)."""
    body = posted()
    engine, details = chosen(body)
    if engine is None:
        return error(400, "Choose the kind of database first.")
    name = body.get("name")
    answer = call("POST", "/api/database", json={"engine": engine["engine"], "details": details,
                                                 "name": name.strip() if isinstance(name, str) else ""})
    if not answer.ok:
        return error(answer.status, answer.message or "The database could not be added.")
    return answer.body


@blueprint.post("/setup/database")
def add_database():
    administrator()
    created = create_database()
    if isinstance(created, Response):
        return created
    return go(f"/browse/databases/{created['id']}-{slug(created.get('name'))}".rstrip("-"))


@blueprint.post("/setup/database/sample")
def add_sample():
    administrator()
    posted()
    answer = call("POST", "/api/database/sample_database")
    if not answer.ok:
        return error(answer.status, answer.message or "The sample database could not be added.")
    return go(f"/browse/databases/{answer.body['id']}-{slug(answer.body.get('name'))}".rstrip("-"))
