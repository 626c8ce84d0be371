"""The admin settings, API keys and tools pages (plugins/app/admin_settings.py, admin_misc.py) through HTTP:
each change is read back through the API, the API's validation message is shown under the field's label,
a key is shown once, and people who are not administrators get the API's 403."""
from __future__ import annotations

import re
from html import unescape

HTMX = {"HX-Request": "true"}


def text(response) -> str:
    return response.get_data(as_text=True)


def test_general_localization_and_caching_settings_go_through_the_settings_api(app, admin, user):
    page = admin.get("/admin/settings/general")
    assert page.status_code == 200 and "Site name" in text(page) and 'aria-current="page">Settings<' in text(page)
    saved = admin.post("/admin/settings/general", headers=HTMX, json={"site-name": "Acme BI",
                                                                      "site-url": "https://bi.example.com/"})
    assert saved.status_code == 200 and "Saved." in text(saved)
    assert admin.get("/api/setting/site-name").json == "Acme BI"
    assert admin.get("/api/setting/site-url").json == "https://bi.example.com"
    assert "Acme BI" in text(admin.get("/"))
    bad = admin.post("/admin/settings/general", headers=HTMX, json={"site-name": "Acme BI", "site-url": "ftp://x"})
    assert bad.status_code == 400 and "Site URL: Invalid site URL" in text(bad)
    assert admin.get("/api/setting/site-url").json == "https://bi.example.com"
    same = admin.post("/admin/settings/general", headers=HTMX, json={"site-name": "Acme BI",
                                                                     "site-url": "https://bi.example.com"})
    assert "Nothing was changed" in text(same)

    zones = text(admin.get("/admin/settings/localization"))
    assert "Europe/Berlin" in zones and "Report time zone" in zones
    assert admin.post("/admin/settings/localization", headers=HTMX, json={
        "site-locale": "de", "report-timezone": "Europe/Berlin", "start-of-week": "monday"}).status_code == 200
    assert admin.get("/api/setting/report-timezone").json == "Europe/Berlin"
    assert admin.get("/api/setting/start-of-week").json == "monday"

    assert admin.post("/admin/settings/caching", headers=HTMX, json={
        "enable-query-caching": "1", "query-caching-min-ttl": "5"}).status_code == 200
    assert admin.get("/api/setting/enable-query-caching").json is True
    assert admin.get("/api/setting/query-caching-min-ttl").json == 5
    wrong = admin.post("/admin/settings/caching", headers=HTMX, json={"enable-query-caching": "1",
                                                                      "query-caching-max-kb": "lots"})
    assert wrong.status_code == 400 and "Largest result to cache (kB)" in text(wrong)

    assert user.get("/admin/settings/general").status_code == 403
    assert user.post("/admin/settings/general", headers=HTMX, json={"site-name": "Mine"}).status_code == 403
    assert admin.get("/api/setting/site-name").json == "Acme BI"
    assert admin.get("/admin/settings/nowhere").status_code == 404
    assert admin.get("/admin/settings").headers["Location"].endswith("/admin/settings/general")


def test_email_settings_are_tried_then_kept_and_a_test_message_sent(app, admin, smtp_server):
    page = text(admin.get("/admin/settings/email"))
    assert "SMTP host" in page and 'type="password"' in page and "Send a test e-mail" in page
    unreachable = admin.post("/admin/settings/email", headers=HTMX, json={
        "email-smtp-host": "127.0.0.1", "email-smtp-port": "1", "email-from-address": "bi@example.com"})
    assert unreachable.status_code == 400 and "Wrong host or port" in text(unreachable)
    assert admin.get("/api/setting/email-smtp-host").json is None
    ok = admin.post("/admin/settings/email", headers=HTMX, json={
        "email-smtp-host": smtp_server.host, "email-smtp-port": str(smtp_server.port), "email-smtp-security": "none",
        "email-smtp-username": "robot", "email-smtp-password": "s3cret", "email-from-address": "bi@example.com"})
    assert ok.status_code == 200, text(ok)
    assert admin.get("/api/setting/email-smtp-port").json == smtp_server.port
    assert admin.get("/api/setting/email-smtp-password").json == "s3cret"
    form = text(admin.get("/admin/settings/email"))
    password_input = re.search(r'<input id="setting-email-smtp-password"[^>]*>', form).group(0)
    assert "s3cret" not in password_input and 'placeholder="Set"' in password_input
    admin.post("/admin/settings/email", headers=HTMX, json={
        "email-smtp-host": smtp_server.host, "email-smtp-port": str(smtp_server.port), "email-smtp-password": "",
        "email-from-name": "BI"})
    assert admin.get("/api/setting/email-smtp-password").json == "s3cret"
    assert admin.get("/api/setting/email-from-name").json == "BI"
    port = admin.post("/admin/settings/email", headers=HTMX, json={"email-smtp-port": "70000"})
    assert port.status_code == 400 and "port" in text(port)
    sent = admin.post("/admin/settings/email/test", headers=HTMX)
    assert sent.status_code == 200 and "admin@example.com" in text(sent)
    assert smtp_server.messages[-1]["to"] == ["admin@example.com"]
    # With e-mail on, an invitation is e-mailed and no password is shown; a reset sends the link.
    invited = admin.post("/admin/people", headers=HTMX, json={"email": "newbie@example.com", "first_name": "Nell"})
    assert invited.status_code == 200 and "invited by e-mail" in text(invited) and "data-secret" not in text(invited)
    assert smtp_server.messages[-1]["to"] == ["newbie@example.com"]
    person = admin.post("/api/user", json={"email": "reset-me@example.com"}).json
    reset = admin.post(f"/admin/people/{person['id']}/reset_password", headers=HTMX)
    assert reset.status_code == 200 and "e-mailed to reset-me@example.com" in text(reset)
    assert "data-secret" not in text(reset)
    cleared = admin.post("/admin/settings/email/clear", headers=HTMX)
    assert cleared.headers["HX-Redirect"] == "/admin/settings/email"
    assert admin.get("/api/setting/email-smtp-host").json is None


def test_public_sharing_and_the_embedding_secret(app, admin):
    assert admin.post("/admin/settings/public-sharing", headers=HTMX, json={}).status_code == 200
    assert admin.get("/api/setting/enable-public-sharing").json is False
    page = text(admin.get("/admin/settings/embedding-in-other-applications"))
    assert "There is no key yet" in page
    made = admin.post("/admin/settings/embedding-in-other-applications/secret", headers=HTMX)
    assert made.headers["HX-Redirect"] == "/admin/settings/embedding-in-other-applications"
    secret = admin.get("/api/setting/embedding-secret-key").json
    assert re.fullmatch(r"[0-9a-f]{64}", secret)
    assert secret in text(admin.get("/admin/settings/embedding-in-other-applications"))
    admin.post("/admin/settings/embedding-in-other-applications/secret", headers=HTMX)
    assert admin.get("/api/setting/embedding-secret-key").json != secret
    admin.post("/admin/settings/embedding-in-other-applications", headers=HTMX, json={"enable-embedding-static": "1"})
    assert admin.get("/api/setting/enable-embedding-static").json is True


def test_api_keys_are_shown_once_regenerated_and_deleted(app, admin, user):
    group = admin.post("/api/permissions/group", json={"name": "Robots"}).json["id"]
    assert "No API key yet" in text(admin.get("/admin/settings/authentication/api-keys"))
    no_group = admin.post("/admin/settings/authentication/api-keys", headers=HTMX, json={"name": "x"})
    assert no_group.status_code == 400
    nameless = admin.post("/admin/settings/authentication/api-keys", headers=HTMX, json={"name": "", "group_id": group})
    assert nameless.status_code == 400 and 'role="alert"' in text(nameless)
    made = admin.post("/admin/settings/authentication/api-keys", headers=HTMX, json={"name": "ETL", "group_id": str(group)})
    key = unescape(re.search(r"data-secret>([^<]+)<", text(made)).group(1))
    assert app.test_client().get("/api/user/current", headers={"X-API-Key": key}).status_code == 200
    listed = admin.get("/api/api-key").json
    assert [(k["name"], k["group_id"]) for k in listed] == [("ETL", group)]
    page = text(admin.get("/admin/settings/authentication/api-keys"))
    assert "ETL" in page and key not in page and listed[0]["masked_key"] in page
    again = admin.post(f"/admin/settings/authentication/api-keys/{listed[0]['id']}/regenerate", headers=HTMX)
    new_key = unescape(re.search(r"data-secret>([^<]+)<", text(again)).group(1))
    assert new_key != key
    assert app.test_client().get("/api/user/current", headers={"X-API-Key": key}).status_code == 401
    assert app.test_client().get("/api/user/current", headers={"X-API-Key": new_key}).status_code == 200
    gone = admin.post(f"/admin/settings/authentication/api-keys/{listed[0]['id']}/delete", headers=HTMX)
    assert gone.headers["HX-Redirect"] == "/admin/settings/authentication/api-keys"
    assert admin.get("/api/api-key").json == []
    assert user.get("/admin/settings/authentication/api-keys").status_code == 403
    assert user.post("/admin/settings/authentication/api-keys", headers=HTMX,
                     json={"name": "Mine", "group_id": group}).status_code == 403


def test_the_task_history_and_the_jobs(app, admin, user, warehouse):
    from core.appdb.models import TaskHistory

    with app.app_context(), app.extensions["tessera"].db.session() as session:  # a run, as the scheduler records
        session.add(TaskHistory(task="sync-fields", db_id=warehouse["db"], duration=1234, status="failed",
                                task_details={"error": "disk gone"}))
        session.commit()
    tasks = admin.get("/admin/tools/tasks")
    assert tasks.status_code == 200 and "Task history" in text(tasks)
    total = admin.get("/api/task").json["total"]
    assert f"{total} task run" in text(tasks)
    assert "sync-fields" in text(tasks) and "Warehouse" in text(tasks) and "disk gone" in text(tasks)
    failed = text(admin.get("/admin/tools/tasks?status=success"))
    assert "sync-fields" not in failed
    assert admin.get("/admin/tools/tasks?status=failed&page=x").status_code == 200
    jobs = admin.get("/admin/tools/jobs")
    assert jobs.status_code == 200 and "scheduler mode" in text(jobs)
    for job in admin.get("/api/task/info").json["jobs"]:
        assert job["key"] in text(jobs)
    assert user.get("/admin/tools/tasks").status_code == 403
    assert user.get("/admin/tools/jobs").status_code == 403
    assert admin.get("/admin").headers["Location"].endswith("/admin/settings/general")
