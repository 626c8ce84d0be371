"""/api/task endpoints (Metabase's task history; superusers only, as its monitoring permission)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.paging import PagingParams, paging
from core.http.types import Enum, NonBlankStr, PositiveInt

from . import service

task_api = Api("task", __name__, url_prefix="/task", auth="superuser")


class TaskId(Params):
    id: PositiveInt


class TaskListQuery(PagingParams):
    status: Enum(*service.STATUSES, nullable=True) = None
    task: NonBlankStr | None = None
    sort_column: Enum(*service.SORT_COLUMNS, nullable=True) = None
    sort_direction: Enum("asc", "desc", nullable=True) = None


@task_api.get("/", query=TaskListQuery)
def list_tasks(query: TaskListQuery):
    """Runs of scheduled jobs, newest first unless sorted otherwise: {total, limit, offset, data}."""
    return service.list_tasks(db.session(), paging(query), status=query.status, task=query.task,
                              sort_column=query.sort_column or "started_at", descending=query.sort_direction != "asc")


@task_api.get("/unique-tasks")
def unique_tasks():
    """The task names the history holds, in alphabetical order."""
    return service.unique_tasks(db.session())


@task_api.get("/info")
def info():
    """The scheduled jobs: each one's schedule, zone, next and previous occurrence."""
    return service.info(db.session(), auth.tessera())


@task_api.get("/<id>", path=TaskId)
def get_task(path: TaskId):
    """One task-history row."""
    return service.get_task(db.session(), path.id)
