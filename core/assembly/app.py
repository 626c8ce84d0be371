"""create_app(config): configuration -> app DB -> plugin manager -> registries -> routes -> errors -> startup.

The Tessera object built here is the app's state, kept in app.extensions["tessera"]: everything a
request needs that is not per-request lives on it.
"""
from __future__ import annotations

import logging
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pluggy
from flask import Flask, Response, g, request
from flask.json.provider import JSONProvider
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge

from core.appdb.db import AppDatabase, close_request_session
from core.assembly import __version__
from core.driver import disconnects
from core.http.api import Api, Endpoint, dumps, json_response
from core.http.errors import ApiError, NoEndpoint, PayloadTooLarge
from core.http.routing import SharedBuilderRule
from core.http.throttle import Throttler
from core.identity.passwords import Hasher

from .config import load_config, split_names
from .logs import RingBufferHandler, install
from .pages import install_frame_headers
from .pages import mount as mount_pages
from .plugins import collect, content_kinds, make_plugin_manager, plugin_migrations, shareables, unique_by
from .records import ContentKind, Exporter, JobKind, Pages, Revisable, Shareable, SystemEvent
from .settings import SettingsRegistry

log = logging.getLogger("tessera")

# The Metabase API level Tessera answers to; clients read version.tag to pick their code paths.
METABASE_API_TAG = "v0.57.0"


@dataclass
class Tessera:
    config: dict
    db: AppDatabase
    pm: pluggy.PluginManager
    settings: SettingsRegistry
    drivers: dict[str, type]
    exporters: dict[str, Exporter]
    revisables: dict[str, Revisable]
    endpoints: list[Endpoint]
    hasher: Hasher
    throttlers: dict[str, Throttler]
    logs: RingBufferHandler
    content_kinds: dict[str, ContentKind] = field(default_factory=dict)
    pages: dict[str, Pages] = field(default_factory=dict)
    shareables: dict[str, Shareable] = field(default_factory=dict)
    job_kinds: dict[str, JobKind] = field(default_factory=dict)
    system_events: dict[str, SystemEvent] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def version(self) -> dict:
        return {"tag": METABASE_API_TAG, "hash": "tessera", "date": "2026-11-21",
                "branch": "tessera", "tessera": __version__}


class OrjsonProvider(JSONProvider):
    def dumps(self, obj, **kwargs):
        return dumps(obj).decode()

    def loads(self, s, **kwargs):
        import orjson

        return orjson.loads(s)


def create_app(config: dict | None = None) -> Flask:
    cfg = load_config(config)
    from core.driver.crypto import check_key, check_stored_details

    check_key(cfg)  # a weak TESSERA_ENCRYPTION_KEY stops startup, not the first registration
    app = Flask("tessera")
    app.url_rule_class = SharedBuilderRule
    app.config.update(cfg)
    app.json = OrjsonProvider(app)
    app.url_map.strict_slashes = False

    db = AppDatabase(cfg["TESSERA_DB_URL"])
    pm = make_plugin_manager(cfg)
    migrations = plugin_migrations(pm)  # collected even when not run: a duplicate name stops startup
    if cfg["TESSERA_RUN_MIGRATIONS"]:
        db.migrate(migrations)
    try:
        # Under the start-up lock: a process that does not migrate waits for one that is migrating.
        with db.exclusive(), db.session() as session:
            check_stored_details(session, cfg)  # another instance's key: stop here, not at every query
    except Exception:
        db.dispose()
        raise

    settings = {key: c.item for key, c in unique_by(collect(pm, "register_settings"), lambda s: s.key, "setting key").items()}
    disabled_engines = set(split_names(cfg["TESSERA_DRIVERS_DISABLED"]))
    drivers = {
        engine: c.item
        for engine, c in unique_by(collect(pm, "register_drivers"), lambda d: d.engine, "driver engine").items()
        if engine not in disabled_engines and c.item.available()
    }
    exporters = {key: c.item for key, c in unique_by(collect(pm, "register_exporters"), lambda e: e.format, "export format").items()}
    revisables = {key: c.item for key, c in unique_by(collect(pm, "register_revisables"), lambda r: r.entity,
                                                      "revisable entity").items()}
    kinds = content_kinds(pm)
    shared = shareables(pm)
    job_kinds = {key: c.item for key, c in unique_by(collect(pm, "register_job_kinds"), lambda k: k.name, "job kind").items()}
    system_events = {key: c.item for key, c in unique_by(collect(pm, "register_system_events"), lambda e: e.name,
                                                         "system event").items()}

    blueprints = unique_by(collect(pm, "register_routes"), lambda bp: bp.url_prefix, "route prefix")
    endpoints: list[Endpoint] = []
    for prefix, contribution in blueprints.items():
        blueprint: Api = contribution.item
        app.register_blueprint(blueprint, url_prefix="/api" + prefix, name=blueprint.name)
        endpoints.extend(blueprint.endpoints)
    pages = mount_pages(app, pm)

    state = Tessera(
        config=cfg,
        db=db,
        pm=pm,
        settings=SettingsRegistry(settings),
        drivers=drivers,
        exporters=exporters,
        revisables=revisables,
        endpoints=endpoints,
        hasher=Hasher(cfg["TESSERA_PASSWORD_HASH_TIME_COST"], cfg["TESSERA_PASSWORD_HASH_MEMORY_KIB"]),
        throttlers={"username": Throttler("username", threshold=10), "ip": Throttler("ip", threshold=50)},
        logs=install(cfg["TESSERA_LOG_BUFFER"]),
        content_kinds=kinds,
        pages=pages,
        shareables=shared,
        job_kinds=job_kinds,
        system_events=system_events,
    )
    app.extensions["tessera"] = state
    app.wsgi_app = disconnects.watch_requests(app.wsgi_app)  # queries are cancelled when their client leaves
    _install_error_handlers(app)
    install_frame_headers(app, pages)
    app.teardown_appcontext(close_request_session)
    if not any(page.prefix == "/" for page in pages.values()):  # a web app serves its own home page
        _install_index(app)
    _install_template_overrides(app, pm)

    # Seeding hooks (the setup token) check, then insert: one process at a time across instances.
    with db.exclusive(), app.app_context():
        pm.hook.startup(app=app)
    log.info("Tessera %s started with %d plugins", __version__, len(pm.get_plugins()))
    return app


REQUEST_ID_HEADER = "X-Request-Id"


# Request ids need to be unique, not secret: 128 bits from a generator seeded once per process from the
# system's randomness (again in a forked worker), rather than a system call per request (uuid4).
_IDS = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _IDS.seed(os.urandom(32)))


def request_id() -> str:
    """This request's id: sent back in X-Request-Id and written in the log lines about it, so that
    a report from a user can be matched with the log. Always ours, never taken from the client."""
    if "request_id" not in g:
        g.request_id = f"{_IDS.getrandbits(128):032x}"
    return g.request_id


# Where the app DB's message names the offending column: SQLite "UNIQUE constraint failed: t.col",
# PostgreSQL "DETAIL: Key (col)=(...) already exists" (a composite key names none: no field then).
_INTEGRITY_FIELD = re.compile(r"constraint failed: \w+\.(\w+)|Key \((\w+)\)=")


def integrity_response(error: IntegrityError) -> Response:
    """The safety net for a constraint a service did not check first: 409 for a duplicate, 400 for any
    other violated constraint, naming the field when the engine's message does, never the SQL."""
    text = str(error.orig)
    match = _INTEGRITY_FIELD.search(text)
    field_name = next((group for group in match.groups() if group), None) if match else None
    duplicate = "unique" in text.lower()
    status, problem = (409, "value must be unique.") if duplicate else (400, "value violates a constraint.")
    log.warning("integrity error [%s]: %s", request_id(), text.splitlines()[0][:200])
    if field_name:
        return json_response({"errors": {field_name: problem}}, status)
    return json_response(f"A value {'is already taken' if duplicate else 'violates a constraint'}.", status)


def _install_error_handlers(app: Flask) -> None:
    @app.after_request
    def send_request_id(response: Response) -> Response:
        response.headers[REQUEST_ID_HEADER] = request_id()
        return response

    @app.errorhandler(IntegrityError)
    def integrity_error(error: IntegrityError):
        return integrity_response(error)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(error):
        # Werkzeug's own limits (MAX_FORM_MEMORY_SIZE for one form field); core.http.api checks the body.
        return json_response(PayloadTooLarge().body, 413)

    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return json_response(error.body, error.status, headers=error.headers)

    @app.errorhandler(NotFound)
    @app.errorhandler(MethodNotAllowed)
    def no_route(error):
        if request.path.startswith("/api"):
            return json_response(NoEndpoint.message, 404)
        return json_response("Not found.", 404)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        status = error.code or 500
        return json_response(error.description or error.name, status)

    @app.errorhandler(Exception)
    def unexpected(error: Exception):
        log.exception("unexpected error on %s %s [request %s]", request.method, request.path, request_id())
        return json_response({"message": "Internal server error.", "via": [{"type": type(error).__name__}]}, 500)


INDEX_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{title}</h1><p>The Tessera API is served under <a href="/api/docs">/api</a>.</p>
<script type="application/json" id="_metabaseBootstrap">{bootstrap}</script>
</body></html>
"""


def _install_template_overrides(app: Flask, pm) -> None:
    """Plugins' template directories (register_templates) are searched before any page plugin's own."""
    directories = [str(contribution.item) for contribution in collect(pm, "register_templates")]
    if directories:
        from jinja2 import FileSystemLoader

        app.jinja_loader = FileSystemLoader(directories)  # Flask asks the app's loader before blueprints'


def _install_index(app: Flask) -> None:
    """The landing page. Setup scripts scrape "setup-token" from it, as they do from Metabase's."""

    @app.get("/")
    def index():
        from html import escape

        from core.appdb.db import session

        state: Tessera = app.extensions["tessera"]
        properties = state.settings.properties(session(), "public")
        bootstrap = dumps(properties).decode().replace("</", "<\\/")
        title = escape(str(properties.get("application-name") or "Tessera"))
        return Response(INDEX_HTML.format(title=title, bootstrap=bootstrap), mimetype="text/html")
