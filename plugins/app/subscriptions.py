"""A dashboard's subscriptions page (`/dashboard/:id-slug/subscriptions`), as Metabase's subscriptions
sidebar: the dashboard's subscriptions (GET /api/pulse?dashboard_id=), one edited at a time
(`?edit=<id>`, or `?new=email|http`): an e-mail channel's recipients (users of GET /api/user/recipients
and raw addresses) or a webhook destination (GET /api/channel), its schedule, a file per card (csv or
xlsx), "Send now" (POST /api/pulse/test with the form as it stands), save (POST /api/pulse, PUT
/api/pulse/:id), delete (PUT archived) and, for a recipient, unsubscribe (DELETE
/api/pulse/:id/subscription). The API decides who may do which; its refusals are shown as its words.
"""
from __future__ import annotations

from dataclasses import dataclass

from flask import request
from werkzeug.exceptions import NotFound

from core.http.internal import call, exists

from . import filters
from .render import go, page, read, signed_in_user
from .views import blueprint, fragment, id_of, posted, slug

SCHEDULES = (("hourly", "Hourly"), ("daily", "Daily"), ("weekly", "Weekly"), ("monthly", "Monthly"))
DAYS = (("mon", "Monday"), ("tue", "Tuesday"), ("wed", "Wednesday"), ("thu", "Thursday"), ("fri", "Friday"),
        ("sat", "Saturday"), ("sun", "Sunday"))
FRAMES = (("first", "First"), ("mid", "15th (midpoint)"), ("last", "Last"))
FORMATS = (("", "No file"), ("csv", "CSV"), ("xlsx", "XLSX"))
HOURS = tuple((h, f"{h % 12 or 12}:00 {'AM' if h < 12 else 'PM'}") for h in range(24))


@dataclass
class Dashboard:
    data: dict

    @property
    def id(self) -> int:
        return int(self.data["id"])

    @property
    def path(self) -> str:
        return f"/dashboard/{self.id}-{slug(self.data.get('name'))}".rstrip("-")

    @property
    def query_cards(self) -> list[dict]:
        """The dashcards that run a saved card, in reading order (tab, row, column)."""
        tabs = {t.get("id"): i for i, t in enumerate(sorted(
            (t for t in self.data.get("tabs") or [] if isinstance(t, dict)),
            key=lambda t: (t.get("position") or 0, t.get("id") or 0)))}
        found = [d for d in self.data.get("dashcards") or [] if isinstance(d, dict)
                 and type(d.get("card_id")) is int and isinstance(d.get("card"), dict)]
        return sorted(found, key=lambda d: (tabs.get(d.get("dashboard_tab_id"), 0), d.get("row") or 0,
                                            d.get("col") or 0))


def filter_values(dashboard: Dashboard, body: dict) -> list[dict]:
    """The subscription's own filter values (`param.<parameter id>` fields), as Metabase stores them: the
    dashboard's parameter with a `value`, read as the dashboard page reads a URL's (filters.read_value);
    a filter left empty is sent with the dashboard's default."""
    chosen = []
    for parameter in dashboard.data.get("parameters") or []:
        if not isinstance(parameter, dict) or not parameter.get("id"):
            continue
        text = " ".join(_list(body.get(f"param.{parameter['id']}"))).strip()
        if not text:
            continue
        single = str(parameter.get("type") or "").startswith("date/")
        value = filters.read_value(parameter, [text] if single else [t.strip() for t in text.split(",")])
        if value is not None:
            chosen.append({**parameter, "value": value})
    return chosen


def shown_values(pulse: dict) -> dict[str, str]:
    """A saved subscription's filter values as the form's text, by parameter id."""
    return {str(p.get("id")): ", ".join(str(v) for v in (p["value"] if isinstance(p.get("value"), list) else [p.get("value")]))
            for p in pulse.get("parameters") or [] if isinstance(p, dict) and p.get("value") not in (None, [])}


def dashboard_of(id_slug: str) -> Dashboard:
    return Dashboard(read(f"/api/dashboard/{id_of(id_slug)}", ignore_view=True))


def _list(value) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in (value if isinstance(value, list) else [value]) if str(v).strip()]


def _int(text, default=None):
    text = str(text or "").strip()
    return int(text) if text.isdigit() and len(text) < 16 else default


def listed(dashboard: Dashboard) -> list[dict]:
    """The dashboard's subscriptions the user may see: those they may change (the API's default list)
    and those they receive, each once."""
    found: dict[int, dict] = {}
    for query in ({"dashboard_id": dashboard.id}, {"dashboard_id": dashboard.id, "creator_or_recipient": "true"}):
        answer = call("GET", "/api/pulse", query=query)
        if answer.ok and isinstance(answer.body, list):
            for pulse in answer.body:
                found.setdefault(pulse["id"], pulse)
    return sorted(found.values(), key=lambda p: p["id"])


def describe(channel: dict) -> str:
    """A channel's schedule in words ("Daily at 8:00 AM", "Monthly on the first Monday at ...")."""
    kind, hour = channel.get("schedule_type"), channel.get("schedule_hour")
    at = f" at {dict(HOURS).get(hour, '')}" if hour is not None else ""
    day = dict(DAYS).get(channel.get("schedule_day"))
    if kind == "hourly":
        return "Hourly"
    if kind == "weekly":
        return f"Weekly on {day or 'a day'}{at}"
    if kind == "monthly":
        frame = channel.get("schedule_frame")
        if frame == "mid":
            return f"Monthly on the 15th{at}"
        return f"Monthly on the {frame or 'first'} {day or 'day'} of the month{at}"
    return f"Daily{at}"


def recipients_text(channel: dict) -> str:
    people = [r.get("common_name") or r.get("email") or "" for r in channel.get("recipients") or []]
    return ", ".join(p for p in people if p)


def is_recipient(pulse: dict, user) -> bool:
    return any(r.get("id") == user.id for c in pulse.get("channels") or [] for r in c.get("recipients") or [])


def editing(pulses: list[dict]) -> tuple[dict | None, dict | None]:
    """The subscription the URL asks to edit, or a new one of the asked channel type (pulse, channel)."""
    edit = _int(request.args.get("edit"))
    if edit is not None:
        pulse = next((p for p in pulses if p["id"] == edit), None)
        if pulse is None:
            pulse = read(f"/api/pulse/{edit}")
        channel = next(iter(pulse.get("channels") or []), None) or {"channel_type": "email"}
        return pulse, channel
    new = request.args.get("new")
    if new in ("email", "http"):
        return {"cards": [], "skip_if_empty": False}, {"channel_type": new, "schedule_type": "daily",
                                                       "schedule_hour": 8, "recipients": []}
    return None, None


def draw(id_slug: str):
    user = signed_in_user()
    if not exists("GET", "/api/pulse"):
        raise NotFound()  # plugins/subscriptions is disabled: no subscriptions to show or make
    dashboard = dashboard_of(id_slug)
    pulses = listed(dashboard)
    pulse, channel = editing(pulses)
    answer = call("GET", "/api/channel")
    destinations = [d for d in (answer.body if answer.ok and isinstance(answer.body, list) else [])
                    if isinstance(d, dict) and d.get("active", True)]
    context = {}
    if pulse is not None:
        people = call("GET", "/api/user/recipients")
        files = {c.get("dashboard_card_id"): ("csv" if c.get("include_csv") else "xlsx" if c.get("include_xls") else "")
                 for c in pulse.get("cards") or []}
        chosen = {r.get("id") for r in channel.get("recipients") or [] if r.get("id")}
        context = {
            "pulse": pulse, "channel": channel, "files": files, "chosen": chosen, "values": shown_values(pulse),
            "people": people.body.get("data", []) if people.ok and isinstance(people.body, dict) else [],
            "raw_emails": ", ".join(r["email"] for r in channel.get("recipients") or []
                                    if r.get("email") and not r.get("id"))}
    return page("app/share_subscriptions.html", name="subscriptions", title=f"Subscriptions to {dashboard.data.get('name')}",
                obj=dashboard.data, user=user, dashboard=dashboard, pulses=pulses, describe=describe,
                recipients_text=recipients_text, is_recipient=lambda p: is_recipient(p, user),
                schedules=SCHEDULES, days=DAYS, frames=FRAMES, formats=FORMATS, hours=HOURS,
                destinations=destinations, **context)


def channel_from(body: dict) -> dict:
    """The channel the form describes, as /api/pulse takes it (the API normalises the schedule)."""
    kind = body.get("channel_type") if body.get("channel_type") in ("email", "http") else "email"
    schedule = body.get("schedule_type") if body.get("schedule_type") in dict(SCHEDULES) else "daily"
    channel = {"channel_type": kind, "enabled": True, "schedule_type": schedule,
               "schedule_hour": _int(body.get("schedule_hour")) if schedule != "hourly" else None,
               "schedule_day": (body.get("schedule_day") or None) if schedule in ("weekly", "monthly") else None,
               "schedule_frame": (body.get("schedule_frame") or None) if schedule == "monthly" else None,
               "details": {}}
    if channel["schedule_frame"] == "mid":
        channel["schedule_day"] = None
    if kind == "email":
        users = [{"id": i} for i in (_int(v) for v in _list(body.get("user_ids"))) if i is not None]
        raw = [e.strip() for text in _list(body.get("emails")) for e in text.replace("\n", ",").split(",") if e.strip()]
        channel["recipients"] = users + [{"email": e} for e in raw]
    else:
        channel["channel_id"] = _int(body.get("channel_id"))
        channel["recipients"] = []
    if _int(body.get("channel_row_id")) is not None:
        channel["id"] = _int(body.get("channel_row_id"))
    return channel


def pulse_from(dashboard: Dashboard, body: dict) -> dict:
    """The subscription the form describes: every query card of the dashboard, each with its file."""
    cards = []
    for dashcard in dashboard.query_cards:
        fmt = body.get(f"attach.{dashcard['id']}")
        cards.append({"id": dashcard["card_id"], "dashboard_card_id": dashcard["id"],
                      "include_csv": fmt == "csv", "include_xls": fmt == "xlsx"})
    return {"name": dashboard.data.get("name") or "Dashboard", "dashboard_id": dashboard.id,
            "collection_id": dashboard.data.get("collection_id"), "cards": cards,
            "channels": [channel_from(body)], "skip_if_empty": body.get("skip_if_empty") == "on"}


def refused(answer):
    return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 500,
                    message=answer.message or "The subscription could not be saved.")


@blueprint.get("/dashboard/<id_slug>/subscriptions")
def subscriptions(id_slug: str):
    return draw(id_slug)


@blueprint.post("/dashboard/<id_slug>/subscriptions/save")
def subscription_save(id_slug: str):
    signed_in_user()
    body = posted()
    dashboard = dashboard_of(id_slug)
    pulse = pulse_from(dashboard, body)
    if not pulse["cards"]:
        return fragment("app/_form_error.html", status=400,
                        message="This dashboard has no questions to send: add one before subscribing.")
    pulse_id = _int(body.get("id"))
    if pulse_id is None:
        answer = call("POST", "/api/pulse", json={**pulse, "parameters": filter_values(dashboard, body)})
    else:
        current = read(f"/api/pulse/{pulse_id}")
        edited = pulse["channels"][0]
        # The subscription's other channels (one per kind) stay as they are: the form edits one.
        others = [c for c in current.get("channels") or [] if c.get("id") != edited.get("id")]
        answer = call("PUT", f"/api/pulse/{pulse_id}", json={
            "cards": pulse["cards"], "skip_if_empty": pulse["skip_if_empty"], "channels": [edited, *others],
            "parameters": filter_values(dashboard, body)})
    if not answer.ok:
        return refused(answer)
    return go(f"{dashboard.path}/subscriptions")


@blueprint.post("/dashboard/<id_slug>/subscriptions/send")
def subscription_send(id_slug: str):
    """Send the subscription as the form stands, now, to its recipients (Metabase's "Send email now"). The
    test route takes no filter values (API-SPEC): the message has the dashboard's defaults."""
    signed_in_user()
    body = posted()
    dashboard = dashboard_of(id_slug)
    answer = call("POST", "/api/pulse/test", json=pulse_from(dashboard, body))
    if not answer.ok:
        return refused(answer)
    return fragment("app/_form_done.html", message="Sent.")


@blueprint.post("/dashboard/<id_slug>/subscriptions/<int:pulse_id>/delete")
def subscription_delete(id_slug: str, pulse_id: int):
    signed_in_user()
    posted()
    dashboard = dashboard_of(id_slug)
    answer = call("PUT", f"/api/pulse/{pulse_id}", json={"archived": True})
    if not answer.ok:
        return refused(answer)
    return go(f"{dashboard.path}/subscriptions")


@blueprint.post("/dashboard/<id_slug>/subscriptions/<int:pulse_id>/unsubscribe")
def subscription_unsubscribe(id_slug: str, pulse_id: int):
    signed_in_user()
    posted()
    dashboard = dashboard_of(id_slug)
    answer = call("DELETE", f"/api/pulse/{pulse_id}/subscription")
    if not answer.ok:
        return refused(answer)
    return go(f"{dashboard.path}/subscriptions")

