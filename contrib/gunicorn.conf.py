"""gunicorn settings for production: `gunicorn -c contrib/gunicorn.conf.py wsgi:app`."""
import multiprocessing
import os

from core.assembly.server import LIMIT_REQUEST_LINE

bind = os.environ.get("TESSERA_BIND", "0.0.0.0:3000")
worker_class = "gthread"
workers = int(os.environ.get("TESSERA_WORKERS", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("TESSERA_THREADS", 8))
# Exports stream for a long time; statement timeouts are enforced per database by the engine.
timeout = 300
graceful_timeout = 30
limit_request_line = LIMIT_REQUEST_LINE  # core.assembly.server says why
# One line per request on stdout (production default). TESSERA_ACCESS_LOG names another file, or is set
# empty to turn it off: gunicorn formats every atom of a line (each header included) per request,
# a measurable share of a 0.2 ms read; the error log and X-Request-Id stay either way.
accesslog = os.environ.get("TESSERA_ACCESS_LOG", "-") or None
errorlog = "-"


def _control_socket() -> str:
    """In the instance's data dir, not gunicorn's per-user default that every instance on a host would share
    (core.assembly.server says why)."""
    from core.assembly.config import load_config
    from core.assembly.server import control_socket

    return control_socket(load_config())


control_socket = _control_socket()


def worker_exit(server, worker):
    """Write the views, query-log rows and expired sessions a worker buffered (core.appdb.counters)."""
    from core.appdb.counters import flush_all

    flush_all()



def on_starting(server):
    """A listening socket per worker on TCP, and a clear stop when the port is taken (core.assembly.server)."""
    from core.assembly.server import choose_listeners

    choose_listeners(server)


def when_ready(server):
    """One scheduler per instance: a process of its own started with the master and restarted when it dies
    (core.schedule.service, core.schedule.supervisor; not a scheduler thread of the master, which forks
    workers). TESSERA_SCHEDULER=off leaves every scheduled job to `tessera worker` processes."""
    from core.assembly.config import load_config
    from core.schedule.service import supervise

    class _Config:  # supervise reads only .config; building an app here would be wasted
        config = load_config()

    server.tessera_scheduler = supervise(_Config)


def on_exit(server):
    from core.schedule.service import stop

    stop(getattr(server, "tessera_scheduler", None))
