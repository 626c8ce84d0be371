"""Browsing data: the databases the signed-in user may see, a database's schemas, a schema's tables
(Metabase's /browse/databases URLs). A table opens as an ad-hoc question of its rows (/question#<base64
of the card>, the format Metabase's links carry) or as its x-ray (/auto/dashboard/table/:id).

Everything listed is what the API lists for the same user: GET /api/database, /api/database/:id/schemas
and /api/database/:id/schema/:schema.
"""
from __future__ import annotations

import base64
from urllib.parse import quote

import orjson

from .render import page, read, signed_in_user
from .views import blueprint, id_of, slug


def adhoc_question_url(table: dict) -> str:
    """/question#<base64 of an unsaved card showing the table's rows>, as Metabase's frontend encodes it
    (standard base64 of the card's UTF-8 JSON)."""
    card = {"dataset_query": {"database": table["db_id"], "type": "query", "query": {"source-table": table["id"]}},
            "display": "table", "visualization_settings": {}}
    return "/question#" + base64.b64encode(orjson.dumps(card)).decode("ascii")


def database_path(database: dict) -> str:
    return f"/browse/databases/{database['id']}-{slug(database.get('name'))}".rstrip("-")


def schema_path(database: dict, schema: str) -> str:
    return f"{database_path(database)}/schema/{quote(schema, safe='')}"


@blueprint.app_template_global("table_links")
def table_links(table: dict) -> dict:
    return {"question": adhoc_question_url(table), "xray": f"/auto/dashboard/table/{table['id']}"}


@blueprint.get("/browse")
@blueprint.get("/browse/databases")
def databases():
    user = signed_in_user()
    found = read("/api/database")
    listed = found.get("data", []) if isinstance(found, dict) else found
    return page("app/browse_databases.html", name="browse", title="Databases", user=user,
                databases=[{**database, "path": database_path(database)} for database in listed])


@blueprint.get("/browse/databases/<id_slug>")
def database(id_slug: str):
    user = signed_in_user()
    database_id = id_of(id_slug)
    info = read(f"/api/database/{database_id}")
    schemas = read(f"/api/database/{database_id}/schemas")
    if len(schemas) == 1:  # one schema (or none, as SQLite's ""): its tables straight away
        return tables_page(user, info, schemas[0], crumbs=[("Databases", "/browse/databases")])
    return page("app/browse_database.html", name="browse-database", title=info.get("name") or "Database", obj=info,
                user=user, crumbs=[("Databases", "/browse/databases")],
                schemas=[{"name": schema, "path": schema_path(info, schema)} for schema in schemas])


@blueprint.get("/browse/databases/<id_slug>/schema/", defaults={"schema": ""})
@blueprint.get("/browse/databases/<id_slug>/schema/<path:schema>")
def schema(id_slug: str, schema: str):
    user = signed_in_user()
    info = read(f"/api/database/{id_of(id_slug)}")
    return tables_page(user, info, schema, crumbs=[("Databases", "/browse/databases"),
                                                   (info.get("name") or "Database", database_path(info))])


def tables_page(user, info: dict, schema: str, crumbs: list):
    tables = read(f"/api/database/{info['id']}/schema/{quote(schema, safe='')}")
    title = schema or info.get("name") or "Tables"
    return page("app/browse_tables.html", name="browse-schema", title=title, obj=info, user=user, crumbs=crumbs,
                schema=schema, tables=sorted(tables, key=lambda t: str(t.get("display_name") or t.get("name")).lower()))
