"""The admin area's entry (/admin) and its tools: the task history (GET /api/task, Metabase's
/admin/tools/tasks) and the scheduler's jobs (GET /api/task/info, /admin/tools/jobs).

The audit of query executions has no API (the query log is written by plugins.query_audit and read by
no endpoint), so no page shows it: a page shows only what its user could read through the API.
"""
from __future__ import annotations

from flask import request

from .admin_common import admin_page
from .render import go, read, signed_in_user
from .views import blueprint

PAGE = 50


@blueprint.get("/admin")
def admin_home():
    user = signed_in_user()
    return go("/admin/settings/general" if user.is_superuser else "/admin/people")


@blueprint.get("/admin/tools/tasks")
def admin_tasks():
    user = signed_in_user()
    page_number = max(int(request.args.get("page", "1")) if request.args.get("page", "1").isdigit() else 1, 1)
    status = request.args.get("status") or None
    statuses = ("started", "success", "failed", "unknown")
    found = read("/api/task", limit=PAGE, offset=(page_number - 1) * PAGE,
                 status=status if status in statuses else None)
    total = found.get("total", 0)
    databases = read("/api/database")
    names = {d["id"]: d["name"] for d in (databases.get("data", []) if isinstance(databases, dict) else databases)}
    return admin_page("app/admin/tasks.html", section="tasks", user=user, title="Tasks", tasks=found.get("data", []),
                      total=total, page_number=page_number, last_page=max((total + PAGE - 1) // PAGE, 1),
                      task_status=status if status in statuses else "", statuses=statuses, database_names=names)


@blueprint.get("/admin/tools/jobs")
def admin_jobs():
    user = signed_in_user()
    info = read("/api/task/info")
    return admin_page("app/admin/jobs.html", section="jobs", user=user, title="Scheduled jobs",
                      scheduler=info.get("scheduler", []), jobs=info.get("jobs", []))
