"""gunicorn settings for production: `gunicorn -c contrib/gunicorn.conf.py wsgi:app`. The settings shared
with `tessera run` come from core.assembly.server.settings; this file adds where to listen, the worker and
thread counts from the environment, and the instance's scheduler process."""
import multiprocessing
import os

from core.assembly.config import load_config
from core.assembly.server import settings

globals().update(settings(load_config()))

bind = os.environ.get("TESSERA_BIND", "0.0.0.0:3000")
workers = int(os.environ.get("TESSERA_WORKERS", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("TESSERA_THREADS", 8))


def when_ready(server):
    """One scheduler per instance: a process of its own started with the master and restarted when it dies
    (core.schedule.service, core.schedule.supervisor; not a scheduler thread of the master, which forks
    workers). TESSERA_SCHEDULER=off leaves every scheduled job to `tessera worker` processes."""
    from core.schedule.service import supervise

    class _Config:  # supervise reads only .config; building an app here would be wasted
        config = load_config()

    server.tessera_scheduler = supervise(_Config)


def on_exit(server):
    from core.schedule.service import stop

    stop(getattr(server, "tessera_scheduler", None))
