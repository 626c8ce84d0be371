"""/api/task endpoints (Metabase's task history; superusers only, as its monitoring permission)."""
from core.appdb import db
from core.http import auth
from core.http.api import Api, Params
from core.http.paging import PagingParams, paging
from core.http.types import PositiveInt

from . import service

task_api = Api("task", __name__, url_prefix="/task", auth="superuser")


class TaskId(Params):
    id: PositiveInt


@task_api.get("/", query=PagingParams)
def list_tasks(query: PagingParams):
    """Recent runs of scheduled jobs, newest first: {total, limit, offset, data}."""
    return service.list_tasks(db.session(), paging(query))


@task_api.get("/info")
def info():
    """The scheduled jobs: each one's schedule, zone, next and previous occurrence."""
    return service.info(db.session(), auth.tessera())


@task_api.get("/<id>", path=TaskId)
def get_task(path: TaskId):
    """One task-history row."""
    return service.get_task(db.session(), path.id)
