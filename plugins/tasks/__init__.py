"""/api/task: the task history of scheduled jobs (core.schedule) and what the scheduler holds, for admins."""
from core import hookimpl

from .views import task_api


@hookimpl
def register_routes():
    return [task_api]
