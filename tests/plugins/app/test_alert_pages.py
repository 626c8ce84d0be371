"""A question's alerts page and the account's alerts (plugins/app/alerts.py) through HTTP: the Alerts
link on a saved question, the alert a form makes (its body exactly, the signed-in person the recipient),
delete, the account's list and unsubscribe, and a refusal shown as the API's words."""
from __future__ import annotations

import pytest

from core.testing import USER_PASSWORD, make_user
from tests.plugins.app.test_pages import HTMX, sign_in, text
from tests.plugins.app.test_share_pages import site  # noqa: F401 - the module's app and questions

pytestmark = pytest.mark.xdist_group("app-alert-pages")


def question_path(site) -> str:  # noqa: F811
    card = site.admin.get(f"/api/card/{site.shop['chart']}").json
    return f"/question/{card['id']}-revenue-by-city"


def test_an_alert_is_set_up_listed_and_deleted(site):  # noqa: F811
    client = sign_in(site.app)
    path = question_path(site)
    assert f'href="{path}/alerts"' in text(client.get(path))
    page = text(client.get(path + "/alerts"))
    assert "No alert is set" in page and 'name="condition"' in page and "Get an alert" in page
    saved = client.post(path + "/alerts/save", json={"condition": "rows", "schedule_type": "weekly",
                                                     "schedule_hour": "9", "schedule_day": "tue", "first_only": "on"},
                        headers=HTMX)
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == path + "/alerts", text(saved)
    [alert] = site.admin.get(f"/api/alert/question/{site.shop['chart']}").json
    admin_id = site.admin.get("/api/user/current").json["id"]
    [channel] = alert["channels"]
    assert (alert["alert_condition"], alert["alert_first_only"]) == ("rows", True)
    assert (channel["schedule_type"], channel["schedule_hour"], channel["schedule_day"]) == ("weekly", 9, "tue")
    assert [r["id"] for r in channel["recipients"]] == [admin_id]
    listed = text(client.get(path + "/alerts"))
    assert "When it has results" in listed and "Weekly on Tuesday at 9:00 AM" in listed
    mine = text(client.get("/account/notifications"))
    assert "Revenue by city" in mine and f"/account/notifications/{alert['id']}/unsubscribe" in mine
    gone = client.post(f"{path}/alerts/{alert['id']}/delete", json={}, headers=HTMX)
    assert gone.status_code == 200 and gone.headers["HX-Redirect"] == path + "/alerts"
    assert site.admin.get(f"/api/alert/question/{site.shop['chart']}").json == []


def test_a_recipient_unsubscribes_and_may_not_delete(site):  # noqa: F811
    reader_id = make_user(site.app, email="alert-reader@example.com").get("/api/user/current").json["id"]
    made = site.admin.post("/api/alert", json={"card": {"id": site.shop["chart"]}, "alert_condition": "rows",
                                               "alert_first_only": False, "channels": [
        {"channel_type": "email", "schedule_type": "hourly", "recipients": [{"id": reader_id}]}]})
    assert made.status_code == 200, made.json
    reader = sign_in(site.app, "alert-reader@example.com", USER_PASSWORD)
    refused = reader.post(f"{question_path(site)}/alerts/{made.json['id']}/delete", json={}, headers=HTMX)
    assert refused.status_code == 403 and 'class="form-error"' in text(refused)
    page = text(reader.get("/account/notifications"))
    assert "Revenue by city" in page
    left = reader.post(f"/account/notifications/{made.json['id']}/unsubscribe", json={}, headers=HTMX)
    assert left.status_code == 200 and left.headers["HX-Redirect"] == "/account/notifications"
    assert "You have no alerts" in text(reader.get("/account/notifications"))
    site.admin.put(f"/api/alert/{made.json['id']}", json={"archived": True})
