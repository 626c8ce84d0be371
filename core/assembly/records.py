"""Small typed records that hooks return, so the core can check and combine what plugins give it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

Visibility = Literal["public", "authenticated", "admin", "internal"]
SettingType = Literal["string", "boolean", "integer", "double", "json", "keyword", "csv", "timestamp"]


@dataclass(frozen=True)
class SettingDef:
    """One setting, as served by /api/setting and (when readable) /api/session/properties.

    `validate` receives the decoded value and returns the value to store, or raises
    core.http.errors.Invalid; `getter(session)` computes a read-only setting (in an app context, from
    the app-DB session) instead of storing it; `on_change(session, registry, value)` runs after a
    new value is stored, in the same transaction (for settings that imply others). `effective(session,
    value)` maps the stored (or environment, or default) value to the one every reader sees while the
    setting stays writable: Metabase's getters over a stored value (enable-password-login is true
    whatever is stored while no single sign-on is enabled).
    """

    key: str
    default: Any = None
    type: SettingType = "string"
    visibility: Visibility = "admin"
    description: str = ""
    sensitive: bool = False
    validate: Callable[[Any], Any] | None = None
    getter: Callable[..., Any] | None = None
    on_change: Callable[..., None] | None = None
    env: bool = True
    effective: Callable[..., Any] | None = None

    @property
    def env_name(self) -> str:
        return "TESSERA_" + self.key.upper().replace("-", "_")


@dataclass(frozen=True)
class PasswordRefusal:
    """Why a local account may not use its password now (the `password_refusal` hook): `message` is the
    400 the login or the password reset answers with."""

    message: str


@dataclass(frozen=True)
class Migrations:
    """A plugin's own app-DB tables: the Alembic revisions in `directory`, recorded in the version
    table `alembic_version_<name>`. Its models use core.appdb.models.Base, so they may reference
    the core's tables (which are always migrated first)."""

    name: str
    directory: Path

    @property
    def version_table(self) -> str:
        return f"alembic_version_{self.name}"


@dataclass(frozen=True)
class Exporter:
    """A download format: `write(columns, rows, options)` yields chunks of the file as bytes.
    `write_pivot(table, options)`, when given, writes a core.export.pivot.PivotTable (downloads
    with pivot_results); a format without it downloads pivot tables flat, as Metabase's json."""

    format: str
    content_type: str
    extension: str
    write: Callable[..., Iterable[bytes]]
    write_pivot: Callable[..., Iterable[bytes]] | None = None


@dataclass(frozen=True)
class Event:
    """Something that happened to a stored object, passed to the track_event hook."""

    topic: str
    user_id: int | None = None
    object: Any = None
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Notice:
    """A message a system event sends: to these users (active ones, by e-mail), with this subject and text."""

    user_ids: tuple[int, ...]
    subject: str
    text: str


@dataclass(frozen=True)
class SystemEvent:
    """A system event (hook register_system_events): `name` as Metabase names its system-event
    notifications ("event/user-joined"), the track_event `topic` it follows, and `notices(session, event)`,
    which reads the tracked Event and returns the Notices to send (none when the event does not apply).
    `notices` may also change stored rows in `session` (the caller commits): an archived card's alerts are
    disabled by the event that tells their creators."""

    name: str
    topic: str
    notices: Callable[[Any, Event], list[Notice]]


@dataclass(frozen=True)
class ItemRef:
    """Where one stored item lives and what a short listing (a bookmark) shows of it."""

    id: int
    name: str
    collection_id: int | None
    archived: bool
    description: str | None = None


# Kinds the built-in plugins list themselves (collections, cards, snippets, timelines, the data model):
# a contributed ContentKind may not take these names.
BUILTIN_CONTENT_MODELS = frozenset({"card", "dataset", "metric", "collection", "snippet", "timeline", "database",
                                    "table", "segment"})


@dataclass(frozen=True)
class ContentKind:
    """A kind of collection content that a plugin owns (dashboards), told to the plugins that list
    content without importing it (collections, search, bookmarks, cards). Every part is optional:

    - `items`: a core.content.items.ItemSource (collection items, the tree's here/below, the archive
      cascade when its collection is archived or unarchived);
    - `search`: `(core.content.search.SearchContext) -> list[dict]`, the readable results built with
      core.content.search.result;
    - `bookmark`: `(ORM model, item-id column)` of the kind's bookmark table;
    - `lookup`: `(session, ids) -> {id: ItemRef}` for the existing items among `ids` (bookmarks, card
      holders; readers check archived state and collection access themselves);
    - `card_counts`: `(session, card_ids) -> {card_id: n}`, how many times the kind places each card
      (a card's `dashboard_count`); `card_holders`: `(session, card_id) -> [item ids]`, which items
      hold the card (GET /api/card/:id/dashboards);
    - `most_viewed`: `(session, limit) -> [(id, view_count, last viewed at)]`, the kind's items not in the
      trash, most viewed first (GET /api/activity/popular_items; readers check collection access).
    """

    model: str
    items: Any = None
    search: Callable[..., list] | None = None
    bookmark: tuple[Any, Any] | None = None
    lookup: Callable[..., dict] | None = None
    card_counts: Callable[..., dict] | None = None
    card_holders: Callable[..., list] | None = None
    most_viewed: Callable[..., list] | None = None


@dataclass(frozen=True)
class Revisable:
    """A kind of content whose revisions /api/revision serves, as `entity` ("card", "dashboard"...).

    `history(session, user, id)` returns its revisions as Metabase's revision JSON, newest first;
    `revert(session, user, id, revision_id)` puts it back in that revision's state, commits, and
    returns the new revision's JSON. Both check the caller's rights (read, write) and raise
    core.http.errors (404 absent object or revision, 403 not allowed) like the owner's own endpoints.
    """

    entity: str
    history: Callable[..., list[dict]]
    revert: Callable[..., dict]


@dataclass(frozen=True)
class SharedQuery:
    """What a public or embed request asks of a shared object's query (Shareable.run and export).

    `parameters` are Metabase parameter objects ({id | slug, type?, target?, value}) as the request and
    token gave them, already merged and checked by the sharing side; the owner matches them to the
    object's own parameters by id or slug and ignores any other. `dashcard_id`/`card_id` name a dashboard's
    card (both None for a card). `pivot` asks for pivot-table results; `max_rows` caps the rows
    (embedding preview: 2000); `options` are the export options (format_rows, pivot_results, chart
    size); `context` is the query log's context ("embedded-question"...; None: "public-question" or
    "public-dashboard").
    """

    parameters: tuple = ()
    dashcard_id: int | None = None
    card_id: int | None = None
    pivot: bool = False
    max_rows: int | None = None
    options: dict = field(default_factory=dict)
    context: str | None = None


@dataclass(frozen=True)
class Shareable:
    """What the sharing plugin (public links, signed embedding, preview) needs from the plugin that owns a
    kind of object, without importing it. `model` is "card", "dashboard" or "action"; `table` is the ORM
    model, with `id`, `public_uuid`, `archived` and (cards, dashboards) `enable_embedding` and
    `embedding_params` columns, which the sharing side reads to find the object and check it is shared.

    Every callable receives an object the sharing side found and checked (exists, not archived, shared
    by this link or token) and answers for an anonymous viewer: it reads exactly what the object holds,
    through core.query.processor with a core.query.access.SharedGrant instead of a user. A field,
    dashcard, card or parameter the object does not use is core.http.errors.NotFound.

    - `public_json(session, obj, hide)`: the object as compat content.md 5 lists its keys, nothing more
      (no SQL, no database details, no creator); parameters whose slug is in `hide` (a frozenset) left out.
    - `run(session, obj, SharedQuery)`: (body bytes, HTTP status) in Metabase's public result shape
      (`data`, `json_query: {parameters}`, `status: "completed"`), failures as `{status: "failed",
      error: "An error occurred while running the query.", error_type}` with status 400.
    - `export(session, obj, SharedQuery, export_format)`: the download Response, written by a registered
      exporter ("api" streams JSON) through core.export.response.
    - `field_values(session, obj, field_id)`: {field_id, values, has_more_values}.
    - `field_search(session, obj, field_id, search_field_id, value, limit)`: [[value, display?], ...].
    - `field_remapping(session, obj, field_id, remapped_id, value)`: [value, display].
    - `param_values(session, obj, param_key, constraints, query)`: {values, has_more_values} of a
      parameter (key = its id), `constraints` {other parameter id: value} narrowing chained filters,
      `query` a search string or None; `param_remapping(session, obj, param_key, value)`: [value, label].
    - `execute(session, obj, parameters)` / `prefill(session, obj, parameters)`: actions only (None
      elsewhere): run it with {parameter id: value} / the current values of a row.
    Slots left None are absent for the kind: their routes answer 404.
    """

    model: str
    table: Any
    public_json: Callable[..., dict]
    run: Callable[..., tuple] | None = None
    export: Callable[..., Any] | None = None
    field_values: Callable[..., dict] | None = None
    field_search: Callable[..., list] | None = None
    field_remapping: Callable[..., list] | None = None
    param_values: Callable[..., dict] | None = None
    param_remapping: Callable[..., list] | None = None
    execute: Callable[..., Any] | None = None
    prefill: Callable[..., dict] | None = None


@dataclass(frozen=True)
class JobRun:
    """What a job's `run` receives: the app (for its state: settings, drivers, config), an app-DB
    `session` of its own (the runner commits it after a successful run and rolls it back after a
    failure), the job's `key` and `args` as scheduled, and `fired_at`, the occurrence being run
    (aware UTC; the runner's clock, so tests that drive the clock see their own time)."""

    app: Any
    session: Any
    kind: str
    key: str
    args: dict
    fired_at: Any


@dataclass(frozen=True)
class JobKind:
    """A kind of scheduled job a plugin runs (core.schedule). Jobs of the kind are stored in the app DB,
    keyed by (kind `name`, a key of the plugin's choosing), each with its own cron, and added, changed
    and removed with core.schedule.schedule / unschedule.

    - `run(job: JobRun) -> dict | None`: does one occurrence; the dict returned is stored as the task
      history's `task_details`. An exception fails the run: it is recorded (status "failed", the error in
      task_details, with the exception's own `task_details` dict if it has one: what a run that gave up
      had done, such as its send attempts), and the next occurrence runs as scheduled.
    - `task`: the name task history shows (Metabase's, e.g. "sync"); defaults to `name`.
    - `db_id(args) -> int | None`: the database a run concerns, shown as task history's db_id.
    - `default_cron`: when given, one job of this kind with key "default" and this cron always exists
      (created at startup if missing; its cron can be changed with schedule()): periodic housekeeping.
    - `jobs(session) -> {key: (cron, timezone, args)}`: when given, the jobs this kind should have
      according to what is stored elsewhere (a database's sync schedule); at every scheduler tick (every
      few seconds, in an app context) the kind's rows in the job table are made to match it: missing
      jobs added, changed ones updated, others (schedule() calls included) removed.
    """

    name: str
    run: Callable[[JobRun], dict | None]
    task: str | None = None
    db_id: Callable[[dict], int | None] | None = None
    default_cron: str | None = None
    jobs: Callable[..., dict] | None = None


@dataclass(frozen=True)
class DashboardPart:
    """One dashcard of a dashboard as a subscription sends it: its saved card with the card parameters
    the subscription's filter values give it (through the dashcard's parameter mappings), or a virtual
    card (`card_id` None) with its text (text and heading cards; None for links and others)."""

    dashcard_id: int
    card_id: int | None
    parameters: tuple = ()
    text: str | None = None
    visualization_settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DashboardContent:
    """A dashboard as a subscription sends it: its name and collection, its parts in reading order
    (tab by tab, then row, then column)."""

    id: int
    name: str
    collection_id: int | None
    parts: tuple[DashboardPart, ...] = ()


@dataclass(frozen=True)
class ActionRunner:
    """How a plugin that places actions (dashboards: a dashcard's `action_id`) runs them without importing
    the actions plugin. Each callable checks the caller's rights itself and raises core.http.errors.

    - `execute(session, user, action_id, parameters, mappings)`: run the action with {parameter id: value};
      `mappings` are the placing object's parameter_mappings ({parameter_id, target}), through which a
      value sent under the placing object's parameter id reaches the action parameter whose target the
      mapping names. Returns the response value (data, or a Flask Response with its own status).
    - `prefill(session, user, action_id, parameters)`: the current values of the row the primary-key
      parameters name ({parameter id: value}; {} for actions that are not implicit update/delete).
    - `describe(session, user, action_ids)`: {action id: action JSON} of the existing, unarchived ones,
      with `database_enabled_actions` (a dashcard's hydrated `action`).
    """

    execute: Callable[..., Any]
    prefill: Callable[..., dict]
    describe: Callable[..., dict]


@dataclass(frozen=True)
class XrayTemplate:
    """An automatic-dashboard template (Metabase's x-ray "dashboard template"), as the x-rays plugin
    reads it: `kind` is "table" (applies to a table entity type such as "TransactionTable") or "field"
    (applies to a field type such as "type/Number"); `name` is unique within its kind and addresses it
    in /rule/<kind>/<name>; `spec` is the template's body (title, dimensions, metrics, filters, groups,
    dashboard_filters, cards), the structure the plugin's own YAML files use."""

    kind: Literal["table", "field"]
    name: str
    spec: dict


@dataclass(frozen=True)
class Pages:
    """Pages a person opens in a browser, served by a plugin outside /api (HTML with the scripts and
    styles it loads): a flask.Blueprint mounted at `prefix` ("/public"; never "/api" or below it).

    Every response of the blueprint carries `Content-Security-Policy: <content_security_policy>;
    frame-ancestors <sources>`, the sources being what `frame_ancestors(session)` returns ("*", or
    origins separated by spaces); None, or no function, means the pages may not be framed (then also
    `X-Frame-Options: DENY`, which every other response of the app carries).
    """

    prefix: str
    blueprint: Any
    frame_ancestors: Callable[..., str | None] | None = None
    content_security_policy: str = "default-src 'self'"


@dataclass(frozen=True)
class NavLink:
    """A link a plugin adds to the web app's navigation (the `app_nav_links` hook): its text and where it
    goes (a path of this server, "/reports", or a full URL)."""

    label: str
    href: str


@dataclass(frozen=True)
class PasswordCheck:
    """A directory's answer about a login's username and password (the `authenticate_password` hook).

    `user` is the core.appdb.models.User to sign in (found or provisioned by the plugin in the login's
    app-DB session, not yet committed); when it is None the directory knows the username but the password
    is wrong, and the login is refused without trying local accounts (their password may be outdated).
    `method` names the directory in the login's "user-login" event ("ldap").
    """

    method: str
    user: Any = None


@dataclass(frozen=True)
class TableRestriction:
    """How one viewer may read one table (hook `restrict_tables`; core.query.restrictions applies it):
    the table is read as `source` (a dataset_query on the table's database that replaces it, run with
    `parameters` for its template tags: Metabase's sandboxing question; its columns are the only ones
    the viewer sees) when given, else as the table itself; in both cases filtered by `filters` (MBQL
    filter clauses on the table's fields, or on the source's columns). `key` distinguishes the answers
    of this restriction from any other (result caches key on it: two viewers with different attribute
    values never share an entry); `label` names who imposes it, for errors. `error` refuses the table
    (the query fails with that message: a missing user attribute, two sandboxes on one table)."""

    table_id: int
    source: dict | None = None
    parameters: tuple = ()
    filters: tuple = ()
    key: str = ""
    label: str = ""
    error: str | None = None


@dataclass(frozen=True)
class SandboxChange:
    """One entry of the `sandboxes` key of PUT /api/permissions/graph, as the permissions plugin hands
    it to the plugin that stores sandboxes (hook `apply_sandboxes`): Metabase's GTAP shape."""

    group_id: int
    table_id: int
    card_id: int | None = None
    attribute_remappings: dict = field(default_factory=dict)
    id: int | None = None
