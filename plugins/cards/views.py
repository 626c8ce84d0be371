"""/api/card endpoints: parse, call one service function, return what it gives."""
from core.appdb import db
from core.export.response import ChartQuery, chart_options
from core.http import auth
from core.http.api import Api
from core.http.errors import Invalid

from . import dashboards as card_dashboards
from . import params, persist, reading, running, series, service, uploads, virtual
from . import schemas as s
from .serialize import card_json, list_json

card_api = Api("card", __name__, url_prefix="/card")


@card_api.get("/", query=s.ListQuery)
def list_cards(query):
    """Cards the caller may read, filtered by f (all, mine, bookmarked, database, table, using_model,
    using_segment, archived)."""
    session, user = db.session(), auth.require_user()
    return list_json(session, user, service.list_cards(session, user, query.f, query.model_id))


@card_api.get("/embeddable", auth="superuser")
def embeddable():
    """Cards with embedding enabled: [{id, name}]."""
    return service.embeddable_cards(db.session(), auth.require_user())


@card_api.get("/public", auth="superuser")
def public():
    """Cards shared by public link: [{id, name, public_uuid}]."""
    return service.public_cards(db.session(), auth.require_user())


@card_api.get("/<id>", path=s.CardId, query=s.GetQuery)
def get(path, query):
    """One card, hydrated."""
    session, user = db.session(), auth.require_user()
    return reading.viewed_card_json(session, user, path.id, bool(query.ignore_view))


@card_api.get("/<id>/dashboards", path=s.CardId)
def dashboards(path):
    """The dashboards holding the card (as a dashcard or a series) that the caller may read: [{id, name}]."""
    return card_dashboards.card_dashboards(db.session(), auth.require_user(), path.id)


@card_api.get("/<id>/related", path=s.CardId)
def related(path):
    """Metabase's recommendations next to a card: its table, metrics, segments, similar questions,
    dashboards and collections."""
    return service.related(db.session(), auth.require_user(), path.id)


@card_api.post("/related", body=s.AdhocQuery)
def adhoc_related(body):
    """The same recommendations for an unsaved query (the body is the query)."""
    return service.adhoc_related(db.session(), auth.require_user(), body.root)


@card_api.post("/", body=s.CardCreate)
def create(body):
    """Save a question, model or metric; result_metadata is computed from the query."""
    session, user = db.session(), auth.require_user()
    return card_json(session, user, service.create_card(session, user, body))


@card_api.put("/<id>", path=s.CardId, body=s.CardUpdate)
def update(path, body):
    """Change a card; archived=true archives it."""
    session, user = db.session(), auth.require_user()
    return card_json(session, user, service.update_card(session, user, path.id, body))


@card_api.delete("/<id>", path=s.CardId, status=204)
def delete(path):
    """Deprecated: archives the card."""
    service.archive_card(db.session(), auth.require_user(), path.id)


@card_api.post("/<id>/copy", path=s.CardId)
def copy(path):
    """A copy named "Copy of <name>" in the same collection."""
    session, user = db.session(), auth.require_user()
    return card_json(session, user, service.copy_card(session, user, path.id))


@card_api.post("/collections", body=s.MoveCards)
def move(body):
    """Move cards to a collection (null: the root)."""
    return service.move_cards(db.session(), auth.require_user(), body.card_ids, body.collection_id)


@card_api.post("/<id>/public_link", path=s.CardId, auth="superuser")
def create_public_link(path):
    """Share by public UUID (the existing one when already shared)."""
    return service.create_public_link(db.session(), auth.require_user(), path.id)


@card_api.delete("/<id>/public_link", path=s.CardId, auth="superuser", status=204)
def delete_public_link(path):
    """Stop sharing by public UUID."""
    service.delete_public_link(db.session(), auth.require_user(), path.id)


@card_api.post("/<id>/query", path=s.CardId, body=s.QueryBody, status=202)
def run_query(path, body):
    """Run the card with parameters: 202 with results, or 400 with status "failed"."""
    return running.run(db.session(), auth.require_user(), path.id, body.parameters, bool(body.ignore_cache))


@card_api.post("/<id>/query/<export_format>", path=s.ExportPath, query=ChartQuery, body=s.ExportBody,
               form_posts=True)
def export(path, query, body):
    """Download the card's results, or its chart as png/svg/pdf (parameters may come as a form field
    holding JSON; width, height, theme and scale in the query string size and colour a chart)."""
    options = {"format_rows": bool(body.format_rows), "pivot_results": bool(body.pivot_results),
               "csv_include_bom": False, **chart_options(query)}
    return running.export(db.session(), auth.require_user(), auth.tessera().exporters, path.id,
                          path.export_format, body.parameters, options)


@card_api.post("/pivot/<id>/query", path=s.CardId, body=s.QueryBody, status=202)
def pivot(path, body):
    """Run the card as a pivot table (its pivot_table.column_split gives rows and columns)."""
    return running.pivot(db.session(), auth.require_user(), path.id, body.parameters)


# --------------------------------------------------------------------------------------------------
# Cards as tables (/api/table/card__:id) and the Saved Questions database (/api/database/-1337).
# These share URL space with the data-model plugin's /table and /database; each Api has its own
# prefix, and Werkzeug prefers the static parts of these rules over `<id>` (docs/ARCHITECTURE.md).
# --------------------------------------------------------------------------------------------------

card_table_api = Api("card_table", __name__, url_prefix="/table/card__<id>")
saved_questions_api = Api("saved_questions_db", __name__, url_prefix="/database/-1337")
database_cards_api = Api("database_cards", __name__, url_prefix="/database/<id>")
# A card's result column has no field row: its "id" is a field reference, which clients put in the
# path as `field,<name>,<options JSON>`; the options hold "type/..." slashes (a column name may too),
# hence `path:` converters.
field_ref_api = Api("field_ref", __name__, url_prefix="/field/field,<path:field_name>,<path:options>")


@card_table_api.get("/query_metadata", path=s.CardId)
def card_table_metadata(path):
    """The card as a table: its result columns as fields."""
    return virtual.query_metadata(db.session(), auth.require_user(), path.id)


@card_table_api.get("/fks", path=s.CardId)
def card_table_fks(path):
    """Always empty: nothing points at a card's virtual table."""
    return virtual.fks(db.session(), auth.require_user(), path.id)


@saved_questions_api.get("/metadata")
def saved_metadata():
    """The Saved Questions database with every readable card as a table."""
    return virtual.metadata(db.session(), auth.require_user())


@saved_questions_api.get("/schemas")
def saved_schemas():
    """Collections holding saved questions usable as sources."""
    return virtual.schemas(db.session(), auth.require_user(), "question")


@saved_questions_api.get("/schema/<schema>", path=s.SchemaPath)
def saved_schema(path):
    """Saved questions of one collection, as tables."""
    return virtual.schema_tables(db.session(), auth.require_user(), "question", path.schema_name)


@saved_questions_api.get("/datasets")
def dataset_schemas():
    """Collections holding models."""
    return virtual.schemas(db.session(), auth.require_user(), "model")


@saved_questions_api.get("/datasets/<schema>", path=s.SchemaPath)
def dataset_schema(path):
    """Models of one collection, as tables."""
    return virtual.schema_tables(db.session(), auth.require_user(), "model", path.schema_name)


@field_ref_api.get("/values", path=s.FieldRefPath)
def field_ref_values(path):
    """Values of a column named by a field reference (a saved question's column): none are stored."""
    return virtual.field_ref_values()


@database_cards_api.get("/card_autocomplete_suggestions", path=s.CardId, query=s.AutocompleteQuery)
def card_autocomplete(path, query):
    """Cards of the database matching the text after `{{#` (id prefix or name)."""
    return virtual.autocomplete(db.session(), auth.require_user(), path.id, query.query)


@card_api.get("/<id>/series", path=s.CardId, query=s.SeriesQuery)
def series_cards(path, query):
    """Cards that can be combined with this one as series; paged by last_cursor (id descending)."""
    session, user = db.session(), auth.require_user()
    return list_json(session, user, series.series(session, user, path.id, query.last_cursor, query.query,
                                                  query.exclude_ids))


@card_api.get("/<id>/params/<param_key>/values", path=s.ParamPath)
def param_values(path):
    """The values a card parameter can take (at most 1000)."""
    return params.values(db.session(), auth.require_user(), path.id, path.param_key)


@card_api.get("/<id>/params/<param_key>/search/<query>", path=s.ParamSearchPath)
def param_search(path):
    """The values of a card parameter containing the text (at most 1000)."""
    return params.values(db.session(), auth.require_user(), path.id, path.param_key, path.query)


@card_api.post("/<id>/persist", path=s.CardId, status=204)
def persist_model(path):
    """Write the model's result into a table of its database; queries read it while it is fresh."""
    persist.persist_card(db.session(), auth.require_user(), path.id)


@card_api.post("/<id>/refresh", path=s.CardId, status=204)
def refresh_model(path):
    """Rewrite a persisted model's table from its query."""
    persist.refresh_card(db.session(), auth.require_user(), path.id)


@card_api.post("/<id>/unpersist", path=s.CardId, status=204)
def unpersist_model(path):
    """Drop the model's table; queries use the model's own query again."""
    persist.unpersist_card(db.session(), auth.require_user(), path.id)


@database_cards_api.post("/persist", path=s.CardId, auth="superuser", status=204)
def persist_database(path):
    """Allow models of this database to be persisted (204 also when already allowed)."""
    persist.enable_database(db.session(), path.id)


@database_cards_api.post("/unpersist", path=s.CardId, auth="superuser", status=204)
def unpersist_database(path):
    """Stop persisting models of this database and drop their tables (204 also when already off)."""
    persist.disable_database(db.session(), path.id)


@card_api.post("/from-csv", body=s.UploadForm)
def from_csv(body):
    """Create a table from the attached CSV (multipart field `file`) and a model on it; returns its id."""
    from flask import request

    upload = request.files.get("file")
    if upload is None:
        raise Invalid({"file": "value must be an uploaded CSV file."})
    return uploads.from_csv(db.session(), auth.require_user(), upload.filename or "upload.csv", upload.read(),
                            body.collection_id)
