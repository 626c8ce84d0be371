"""A question's alerts (`/question/:id-slug/alerts`, Metabase's "Get an alert") and the signed-in user's
alerts (`/account/notifications`). The question's page lists its alerts (GET /api/alert/question/:id)
and sets one up for the signed-in person: when the question has results, reaches its goal or goes below
it, on a schedule, optionally only the first time (POST /api/alert, the person the only recipient, as
Metabase lets anyone do). Delete archives (PUT archived), unsubscribe leaves (DELETE
/api/alert/:id/subscription). The API decides who may do which; its refusals are shown as its words.
"""
from __future__ import annotations

from core.http.internal import call

from .render import go, page, read, signed_in_user
from .subscriptions import DAYS, HOURS, describe, is_recipient
from .views import blueprint, fragment, id_of, posted, slug

CONDITIONS = (("rows", "When this question has results"), ("goal_above", "When it reaches its goal"),
              ("goal_below", "When it goes below its goal"))
SCHEDULES = (("hourly", "Hourly"), ("daily", "Daily"), ("weekly", "Weekly"))


def question_path(card: dict) -> str:
    return f"/question/{card['id']}-{slug(card.get('name'))}".rstrip("-")


def condition_text(alert: dict) -> str:
    if alert.get("alert_condition") == "rows":
        return "When it has results"
    return "When it reaches its goal" if alert.get("alert_above_goal") is not False else "When it goes below its goal"


def has_goal(card: dict) -> bool:
    settings = card.get("visualization_settings") or {}
    return settings.get("graph.goal_value") is not None or (
        card.get("display") == "progress" and settings.get("progress.goal") is not None)


def refused(answer):
    return fragment("app/_form_error.html", status=answer.status if answer.status >= 400 else 500,
                    message=answer.message or "The alert could not be saved.")


@blueprint.get("/question/<id_slug>/alerts")
def question_alerts(id_slug: str):
    user = signed_in_user()
    card = read(f"/api/card/{id_of(id_slug)}", ignore_view=True)
    alerts = read(f"/api/alert/question/{card['id']}")
    return page("app/question_alerts.html", name="alerts", title=f"Alerts on {card.get('name')}", obj=card,
                user=user, card=card, path=question_path(card), alerts=alerts, describe=describe,
                condition_text=condition_text, is_recipient=lambda a: is_recipient(a, user),
                conditions=CONDITIONS if has_goal(card) else CONDITIONS[:1], schedules=SCHEDULES, days=DAYS,
                hours=HOURS)


def alert_from(card_id: int, user_id: int, body: dict) -> dict:
    condition = body.get("condition") if body.get("condition") in dict(CONDITIONS) else "rows"
    schedule = body.get("schedule_type") if body.get("schedule_type") in dict(SCHEDULES) else "daily"
    channel = {"channel_type": "email", "enabled": True, "schedule_type": schedule,
               "recipients": [{"id": user_id}]}
    if schedule != "hourly":
        hour = str(body.get("schedule_hour") or "")
        channel["schedule_hour"] = int(hour) if hour.isdigit() else 8
    if schedule == "weekly":
        channel["schedule_day"] = body.get("schedule_day") if body.get("schedule_day") in dict(DAYS) else "mon"
    return {"card": {"id": card_id}, "alert_condition": "rows" if condition == "rows" else "goal",
            "alert_above_goal": None if condition == "rows" else condition == "goal_above",
            "alert_first_only": body.get("first_only") == "on", "channels": [channel]}


@blueprint.post("/question/<id_slug>/alerts/save")
def question_alert_save(id_slug: str):
    user = signed_in_user()
    body = posted()
    card = read(f"/api/card/{id_of(id_slug)}", ignore_view=True)
    answer = call("POST", "/api/alert", json=alert_from(card["id"], user.id, body))
    if not answer.ok:
        return refused(answer)
    return go(f"{question_path(card)}/alerts")


@blueprint.post("/question/<id_slug>/alerts/<int:alert_id>/delete")
def question_alert_delete(id_slug: str, alert_id: int):
    signed_in_user()
    posted()
    card = read(f"/api/card/{id_of(id_slug)}", ignore_view=True)
    answer = call("PUT", f"/api/alert/{alert_id}", json={"archived": True})
    if not answer.ok:
        return refused(answer)
    return go(f"{question_path(card)}/alerts")


@blueprint.get("/account/notifications")
def account_alerts():
    user = signed_in_user()
    alerts = read("/api/alert")
    return page("app/account_alerts.html", name="account-alerts", title="Your alerts", user=user, alerts=alerts,
                describe=describe, condition_text=condition_text, question_path=question_path,
                is_recipient=lambda a: is_recipient(a, user))


@blueprint.post("/account/notifications/<int:alert_id>/unsubscribe")
def account_alert_unsubscribe(alert_id: int):
    signed_in_user()
    posted()
    answer = call("DELETE", f"/api/alert/{alert_id}/subscription")
    if not answer.ok:
        return refused(answer)
    return go("/account/notifications")
