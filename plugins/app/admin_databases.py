"""Admin pages for databases (`/admin/databases`, Metabase's URLs): the list, adding and editing a
connection, testing it, syncing and scanning now, the sync and scan schedules, and removing one after a
confirmation that says what depends on it.

The connection form is setup's (setup_data.engines + app/_engine_fields.html), filled with the details
the API shows: secrets arrive as the API's mask and go back unchanged, so the API keeps the stored value
(crypto.merge_masked); a page never holds a secret. Every write is one API call
(POST/PUT/DELETE /api/database..., /sync_schema, /rescan_values, /discard_values, /validate).
"""
from __future__ import annotations

from flask import Response, request

from core.driver.crypto import MASK
from core.http.internal import call

from .render import go, page, read
from .setup_data import administrator, chosen, create_database, engines, error
from .views import blueprint, fragment, posted

DAYS = (("sun", "Sunday"), ("mon", "Monday"), ("tue", "Tuesday"), ("wed", "Wednesday"), ("thu", "Thursday"),
        ("fri", "Friday"), ("sat", "Saturday"))
FRAMES = (("first", "First"), ("mid", "15th (midpoint)"), ("last", "Last"))
# The schedules Metabase's form offers: a sync hourly or daily, a scan daily, weekly or monthly.
SCHEDULE_TYPES = {"metadata_sync": ("hourly", "daily"), "cache_field_values": ("daily", "weekly", "monthly")}
# Metabase's three scan choices, as the pair (is_full_sync, is_on_demand) the API stores.
SCANS = {"full": (True, False), "on-demand": (False, True), "never": (False, False)}
USAGE = (("question", "question", "questions"), ("dataset", "model", "models"), ("metric", "metric", "metrics"),
         ("segment", "segment", "segments"))


@blueprint.app_template_global("details_mask")
def details_mask() -> str:
    return MASK


def text(value) -> str:
    """A posted text, stripped; anything else a form cannot send is no text."""
    return value.strip() if isinstance(value, str) else ""


def posted_id(value) -> int | str | None:
    """An id a select posted, as a number when it is one JSON can carry; other text goes to the API as
    sent (its refusal names the field), nothing as None."""
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value)
    return value if value not in ("", None) else None


def admin_path(database: dict) -> str:
    return f"/admin/databases/{database['id']}"


@blueprint.get("/admin/databases")
def admin_databases_list():
    user = administrator()
    listed = read("/api/database").get("data", [])
    return page("app/admin/databases.html", admin_section="databases", name="admin-databases", title="Databases",
                user=user, databases=listed)


@blueprint.get("/admin/databases/create")
def admin_database_new():
    user = administrator()
    chosen_engine = next((e for e in engines() if e["engine"] == request.args.get("engine")), None)
    return page("app/admin/databases_edit.html", admin_section="databases", name="admin-database-new",
                title="Add a database", user=user, engines=engines(), engine=chosen_engine, database=None)


@blueprint.post("/admin/databases/create")
def admin_database_create():
    administrator()
    created = create_database()
    return created if isinstance(created, Response) else go(admin_path(created))


@blueprint.get("/admin/databases/<int:database_id>")
def admin_database_edit(database_id: int):
    user = administrator()
    database = read(f"/api/database/{database_id}")
    engine = next((e for e in engines() if e["engine"] == database.get("engine")), None)
    return page("app/admin/databases_edit.html", admin_section="databases", name="admin-database",
                title=database.get("name") or "Database", obj=database, user=user, engines=engines(), engine=engine,
                database=database, schedules=schedule_forms(database), scan=scan_choice(database), days=DAYS,
                frames=FRAMES)


def scan_choice(database: dict) -> str:
    pair = (bool(database.get("is_full_sync")), bool(database.get("is_on_demand")))
    return next((key for key, value in SCANS.items() if value == pair), "full")


def schedule_forms(database: dict) -> list[dict]:
    stored = database.get("schedules") or {}
    labels = (("metadata_sync", "Database syncing"), ("cache_field_values", "Scanning for filter values"))
    return [{"key": key, "label": label, "types": SCHEDULE_TYPES[key], "value": stored.get(key) or {}}
            for key, label in labels]


def schedules_from(body: dict) -> dict:
    """The posted `<schedule>.<part>` fields as the API's schedule maps (it checks each value)."""
    schedules = {}
    for key in SCHEDULE_TYPES:
        kind = body.get(f"{key}.schedule_type")
        if not kind:
            continue
        schedule = {"schedule_type": kind}
        for part in ("schedule_minute", "schedule_hour"):
            value = body.get(f"{key}.{part}")
            if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 10:
                schedule[part] = int(value)
            elif value not in (None, ""):
                schedule[part] = value  # the API's refusal names the part
        if kind in ("weekly", "monthly"):
            schedule["schedule_day"] = body.get(f"{key}.schedule_day") or None
        if kind == "monthly":
            schedule["schedule_frame"] = body.get(f"{key}.schedule_frame") or "first"
        schedules[key] = schedule
    return schedules


@blueprint.post("/admin/databases/<int:database_id>")
def admin_database_save(database_id: int):
    administrator()
    body = posted()
    engine, details = chosen(body)
    if engine is None:
        return error(400, "Choose the kind of database first.")
    stored = call("GET", f"/api/database/{database_id}")
    if not stored.ok:
        return error(stored.status, stored.message or "There is no such database.")
    # Details the form does not draw (hidden ones, keys a client added) go back as the API showed them.
    drawn = {field.get("name") for field in engine["fields"] if field.get("type") not in ("hidden", "section", "info")}
    kept = {key: value for key, value in (stored.body.get("details") or {}).items() if key not in drawn}
    changes = {"engine": engine["engine"], "name": text(body.get("name")), "details": {**kept, **details}}
    answer = call("PUT", f"/api/database/{database_id}", json=changes)
    if not answer.ok:
        return error(answer.status, answer.message or "The database could not be saved.")
    return fragment("app/_form_done.html", message="Saved: the connection works with these details.")


@blueprint.post("/admin/databases/<int:database_id>/schedules")
def admin_database_save_schedules(database_id: int):
    administrator()
    body = posted()
    full_sync, on_demand = SCANS.get(text(body.get("scan")), SCANS["full"])
    changes = {"schedules": schedules_from(body), "is_full_sync": full_sync, "is_on_demand": on_demand}
    answer = call("PUT", f"/api/database/{database_id}", json=changes)
    if not answer.ok:
        return error(answer.status, answer.message or "The schedules could not be saved.")
    return fragment("app/_form_done.html", message="Schedules saved.")


@blueprint.post("/admin/databases/<int:database_id>/validate")
def admin_database_validate(database_id: int):
    administrator()
    body = posted()
    engine, details = chosen(body)
    if engine is None:
        return error(400, "Choose the kind of database first.")
    if MASK in details.values():
        # The test cannot see the stored secret; saving checks the connection with it.
        return error(400, "Type the password (or other secret) again to test the connection, or save: saving "
                          "checks the connection with the stored one.")
    answer = call("POST", "/api/database/validate", json={"engine": engine["engine"], "details": details})
    if not answer.ok:
        return error(answer.status, answer.message or "The connection could not be tested.")
    if not answer.body.get("valid"):
        return error(400, answer.body.get("message") or "Tessera could not connect with these details.")
    return fragment("app/_form_done.html", message="Connected: these details work.")


ACTIONS = {"sync_schema": "Syncing the schema started: new tables and columns appear when it ends.",
           "rescan_values": "Re-scanning field values started.",
           "discard_values": "The saved field values were discarded."}


@blueprint.post("/admin/databases/<int:database_id>/sync_schema", defaults={"action": "sync_schema"})
@blueprint.post("/admin/databases/<int:database_id>/rescan_values", defaults={"action": "rescan_values"})
@blueprint.post("/admin/databases/<int:database_id>/discard_values", defaults={"action": "discard_values"})
def admin_database_act(database_id: int, action: str):
    administrator()
    posted()
    answer = call("POST", f"/api/database/{database_id}/{action}")
    if not answer.ok:
        return error(answer.status, answer.message or "That did not work.")
    return fragment("app/_form_done.html", message=ACTIONS[action])


@blueprint.get("/admin/databases/<int:database_id>/remove")
def admin_database_confirm_removal(database_id: int):
    user = administrator()
    database = read(f"/api/database/{database_id}")
    usage = read(f"/api/database/{database_id}/usage_info")
    affected = [f"{usage.get(key, 0)} {one if usage.get(key, 0) == 1 else many}" for key, one, many in USAGE]
    return page("app/admin/databases_remove.html", admin_section="databases", name="admin-database-remove",
                title=f"Remove {database.get('name')}", obj=database, user=user, database=database,
                affected=affected, total=sum(usage.get(key, 0) for key, _, _ in USAGE))


@blueprint.post("/admin/databases/<int:database_id>/remove")
def admin_database_remove(database_id: int):
    administrator()
    body = posted()
    found = call("GET", f"/api/database/{database_id}")
    if not found.ok:
        return error(found.status, found.message or "There is no such database.")
    if text(body.get("confirm")) != found.body.get("name"):
        return error(400, "Type the database's name exactly to confirm the removal.")
    answer = call("DELETE", f"/api/database/{database_id}")
    if not answer.ok:
        return error(answer.status, answer.message or "The database could not be removed.")
    return go("/admin/databases")
