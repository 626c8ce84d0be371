"""Every hook specification of Tessera (pluggy project name "tessera").

Each docstring says when the hook fires, what an implementation returns and how the results of
several implementations are combined. Plugins implement them with `core.hookimpl`.
"""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("tessera")
# Plugins take it from `core` (the public API); modules of the core take it from here, so that none of
# them imports the `core` facade, which loads the app lazily.
hookimpl = pluggy.HookimplMarker("tessera")

# --------------------------------------------------------------------------------------------------
# Assembly: called once by create_app, in this order, before the first request.
# --------------------------------------------------------------------------------------------------


@hookspec
def register_settings():
    """Fires once while the app is built. Return a list of core.assembly.records.SettingDef.

    All lists are concatenated; two definitions of one key stop startup with an error naming both
    plugins.
    """


@hookspec
def register_migrations():
    """Fires when the app DB is migrated (create_app, `tessera migrate`), before any other assembly
    hook. Return a list of core.assembly.records.Migrations: the plugin's own Alembic revisions.

    All lists are concatenated and keyed by `name`; a duplicate name stops startup naming both
    plugins. The core's own revisions run first, then each set in plugin order, each tracked in its
    own version table, so a disabled plugin's tables stay untouched and enabling it later migrates it.
    """


@hookspec
def register_drivers():
    """Fires once while the app is built. Return a list of core.driver.contract.Driver subclasses.

    All lists are concatenated and keyed by `Driver.engine`; a duplicate engine stops startup with
    an error naming both plugins. A driver whose DBAPI module cannot be imported is hidden.
    """


@hookspec
def register_exporters():
    """Fires once while the app is built. Return a list of core.assembly.records.Exporter.

    Concatenated and keyed by `format`; a duplicate format stops startup naming both plugins.
    """


@hookspec
def register_revisables():
    """Fires once while the app is built. Return a list of core.assembly.records.Revisable: the kinds
    of content this plugin records revisions of, served by /api/revision under their `entity` name.

    Concatenated and keyed by `entity`; a duplicate entity stops startup naming both plugins.
    """


@hookspec
def register_routes():
    """Fires once while the app is built. Return a list of core.http.api.Api blueprints.

    The core mounts each under /api + its url_prefix, applies authentication and Metabase's error
    shapes, and stops startup when two plugins claim the same prefix.
    """


@hookspec
def register_pages():
    """Fires once while the app is built, after register_routes. Return a list of
    core.assembly.records.Pages: blueprints serving pages outside /api (core.assembly.pages).

    Concatenated and keyed by `prefix`; a prefix claimed twice, or one at or under /api, stops startup
    naming the plugin(s). A disabled plugin's pages answer 404 like any unknown path. The prefix "/"
    mounts a blueprint at the root (the web app's); while one does, it serves `/` instead of the API's
    landing page.
    """


@hookspec
def register_templates():
    """Fires once while the app is built. Return a list of directories (pathlib.Path) of Jinja2
    templates: a template there overrides the one of the same name that a page plugin ships
    ("app/dashboard.html"), as Datasette's --template-dir does.

    Concatenated in plugin order; the first directory holding a name wins, and every one wins over the
    templates of the page plugins themselves.
    """


@hookspec
def register_content_kinds():
    """Fires once while the app is built. Return a list of core.assembly.records.ContentKind: the kinds
    of collection content the plugin owns (dashboards), so that collection items and the tree, the
    archive cascade, search, bookmarks and cards show them without importing the plugin.

    All lists are concatenated and keyed by `model`; a duplicate model, or one that names a built-in
    kind (core.assembly.records.BUILTIN_CONTENT_MODELS), stops startup naming the plugin(s). Read them at request
    time through core.content.kinds; a disabled plugin's kind is simply absent.
    """


@hookspec
def register_shareables():
    """Fires once while the app is built. Return a list of core.assembly.records.Shareable: the kinds of
    object the plugin owns that can be shared by public link or embedded (cards, dashboards, actions),
    with what the sharing plugin needs to serve them to an anonymous viewer without importing the owner.

    All lists are concatenated and keyed by `model`; a duplicate model stops startup naming both plugins.
    Read them at request time through core.content.shared; a disabled owner's kind is simply absent (its
    public and embed URLs are 404).
    """


@hookspec
def register_job_kinds():
    """Fires once while the app is built. Return a list of core.assembly.records.JobKind: the kinds of
    scheduled job the plugin runs (syncs, model refreshes, subscription sends, housekeeping).

    All lists are concatenated and keyed by `name`; a duplicate name stops startup naming both plugins.
    Stored jobs of a kind no enabled plugin registers are left alone and not run (core.schedule).
    """


@hookspec
def register_commands(cli):
    """Fires when the `tessera` command line is built. Add click commands to the `cli` group.

    Every implementation is called; return values are ignored.
    """


@hookspec
def startup(app):
    """Fires once at the end of create_app, after migrations and routes. Return value ignored.

    Every implementation is called, in plugin order: use it to seed rows or start background work.
    The hooks run under the app DB's start-up lock (AppDatabase.exclusive): of several processes or
    instances starting together, one runs them at a time, so a check-then-insert seed is safe.
    """


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def authenticate(request, session):
    """Fires the first time a request asks for its user. Return a core.appdb.models.User or None.

    firstresult: the first non-None user wins. The session cookie and header are tried first
    (tryfirst in core.http.auth), then API keys and any other scheme.
    """


@hookspec(firstresult=True)
def authenticate_password(session, username, password):
    """Fires at each password login (POST /api/session, the app's login form), inside the login throttle
    and before local accounts are checked. `username` is as typed (stripped), `password` non-blank.
    Return a core.assembly.records.PasswordCheck when this plugin's directory knows the username (with the
    user to sign in, or no user: wrong password, refused), or None to leave the login to the next plugin
    and finally to local accounts (also when the directory cannot be reached).

    firstresult: the first PasswordCheck decides.
    """


@hookspec(firstresult=True)
def password_refusal(session, email):
    """Fires before a local account's password is checked or set: at a password login that the
    authenticate_password hook left to local accounts (inside the login throttle, before the password is
    checked, so a refusal says nothing about the password), at POST /api/session/forgot_password and at
    POST /api/session/reset_password (with the e-mail address of the token's account). `email` is as typed.
    Return a core.assembly.records.PasswordRefusal to refuse with its message (a 400), None to allow.

    firstresult: the first refusal decides; with none, passwords work as always.
    """


@hookspec
def check_permission(user, action, obj):
    """Fires whenever core.policy.permissions decides whether `user` may do `action` ("read", "write",
    "view-data", "query", "native", "download", "data-model", "details", "execute") to `obj`, a dict
    {"model": "collection" | "database", "id": ..., and "namespace" or "table_id"}.

    Return True or False to take part, None to abstain. Any False denies; otherwise any True grants;
    when every plugin abstains the core's own policy decides.
    """


# --------------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def execute_query(context):
    """Fires for every query run. Return the query result for `context`.

    firstresult: the core implementation is trylast; limits, caching and audit are hookwrappers
    around it.
    """


@hookspec
def restrict_tables(session, viewer, database_id):
    """Fires once for every query run on database `database_id` (core.query.restrictions, from
    core.query.preparation.prepare) and whenever the core reads a table's values for a viewer (field
    values, search, remapping). `viewer` is a core.policy.principal.Principal (a user or a shared
    object's grant) or None. Return a list of core.assembly.records.TableRestriction for the tables of
    the database `viewer` may read only in part (rows, columns), or None.

    Every implementation's lists are concatenated; two restrictions of one table refuse the table
    (fail closed). A restricted viewer runs no native SQL on the database, and the restriction is
    applied wherever the compiler reads the table (source, joins, implicit joins, card sources, values).
    The answer must follow from the app DB, read through `session` (kept prepared runs are reused
    until a table they read changes), and restrict only grants or users core.policy.permissions calls
    sandboxed (is_sandboxed): kept runs of other users are shared by their groups.
    """


@hookspec(firstresult=True)
def apply_sandboxes(session, user, changes):
    """Fires when PUT /api/permissions/graph carries a `sandboxes` key, inside the graph's transaction
    (before it commits), and with changes=None when the permissions plugin only asks whether
    sandboxes exist (a "sandboxed" view-data value is accepted only then). `changes` is a list of
    core.assembly.records.SandboxChange. Return True when applied (or, with None, when supported);
    raise core.http.errors.Invalid for a bad entry.

    firstresult: the plugin storing sandboxes answers; while none is installed the graph answers 402
    (Metabase's open edition).
    """


# --------------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------------


@hookspec
def track_event(event):
    """Fires after a change to a stored object is committed (core.assembly.events.emit). Return ignored.

    Every implementation is called, but one decorated with core.assembly.events.following only for the
    topics it follows (a read that emits only while someone listens, such as GET /api/card/:id, stays
    answered from core.appdb.memo while nobody follows its topic); one that raises is logged and does
    not stop the others.
    """


@hookspec
def register_system_events():
    """Fires once while the app is built. Return a list of core.assembly.records.SystemEvent: events
    (a user's first sign-in, a failed sync, an archived question with alerts...) that send messages.

    All lists are concatenated and keyed by `name`; a duplicate name stops startup naming both plugins.
    Each follows a track_event topic; the plugin that delivers messages (plugins.subscriptions) calls its
    `notices` after the change is committed and e-mails what it returns.
    """


@hookspec
def after_sync(database):
    """Fires after a database's schema sync finished successfully. Return ignored."""


# --------------------------------------------------------------------------------------------------
# Content: what a dashboards plugin tells the core (core.content.related)
# --------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def dashboard_cards(session, card_ids, dashboard_ids):
    """Fires when core.content.related looks for dashboards (a card's dashboard-mates, recommended
    dashboards). Return the (dashboard_id, card_id) pairs of the dashboard cards that hold one of
    `card_ids` or sit on one of `dashboard_ids` (either may be None: no condition on it).

    firstresult: the dashboards plugin answers; while none is installed there are no dashboards.
    """


@hookspec(firstresult=True)
def visible_dashboards(session, user, dashboard_ids):
    """Fires when core.content.related shows dashboards. Return the JSON of those of `dashboard_ids` that
    `user` may see (not archived, collection readable), in the order given.

    firstresult: the dashboards plugin answers; while none is installed the answer is empty.
    """


@hookspec(firstresult=True)
def dashboard_content(session, dashboard_id, parameters):
    """Fires when a dashboard subscription is sent or its dashboard previewed (plugins.subscriptions).
    Return a core.assembly.records.DashboardContent: the dashboard's cards in reading order, each with
    the card parameters that `parameters` (the subscription's filter values, a list of dashboard
    parameter maps with "id" and "value"; the dashboard's defaults fill the rest) give it; None when
    the dashboard does not exist or is archived. No permission check: the caller checks the
    dashboard's collection and runs each card as its user.

    firstresult: the dashboards plugin answers; while none is installed there are no dashboards.
    """


# --------------------------------------------------------------------------------------------------
# Web app: how plugins add to the pages of plugins/app
# --------------------------------------------------------------------------------------------------


@hookspec
def app_nav_links(user):
    """Fires each time a web-app page is drawn for a signed-in `user` (core.appdb.models.User). Return
    a list of core.assembly.records.NavLink for the navigation bar (an empty list for a user who should
    see none).

    Concatenated in plugin order, after the app's own links.
    """


@hookspec
def app_page_slot(page, obj, user):
    """Fires each time a web-app page is drawn, once per page. `page` names it ("home", "collection",
    "dashboard", "question", "table", "search", "profile"); `obj` is what the page shows as the API
    answered it to this user (a dict; None for home and search); `user` is the signed-in
    core.appdb.models.User. Return HTML to place under the page's heading as a markupsafe.Markup
    (escape what you put in it), or None.

    The non-None results are placed in plugin order.
    """


# --------------------------------------------------------------------------------------------------
# Actions: how a dashboards plugin runs the action a dashcard carries
# --------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def action_runner():
    """Fires when a dashcard's action is executed, prefilled or shown (POST/GET
    /api/dashboard/:id/dashcard/:dcid/execute, a dashboard's hydrated dashcards). Return a
    core.assembly.records.ActionRunner.

    firstresult: the actions plugin answers; while none is installed there are no actions (the execute
    routes answer 404 and dashcards show no action).
    """


# --------------------------------------------------------------------------------------------------
# Automatic dashboards: templates the x-rays plugin reads
# --------------------------------------------------------------------------------------------------


@hookspec
def register_xray_templates():
    """Fires once at startup while the x-rays plugin is enabled (from its `startup`). Return a list of
    core.assembly.records.XrayTemplate: automatic-dashboard templates for table entity types or field
    types, in the structure of the plugin's own files (plugins/xrays/templates).

    All lists are concatenated and keyed by (kind, name); a name claimed twice stops startup with an
    error naming both plugins. While the x-rays plugin is disabled nobody reads them.
    """
