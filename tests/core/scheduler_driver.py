"""One scheduler process for tests/core/test_scheduler_postgres.py: builds the app on the given app DB
and runs the runner's ticks over a stretch of simulated time, starting when the go-file appears.

    python -m tests.core.scheduler_driver <app-db-url> <data-dir> <start epoch> <end epoch> <step s> <go-file>
"""
import datetime as dt
import os
import sys
import time


def main(url, data_dir, start, end, step, go_file):
    from core.assembly.app import create_app
    from core.schedule.runner import tick

    app = create_app({"TESSERA_DB_URL": url, "TESSERA_DATA_DIR": data_dir, "TESSERA_RUN_MIGRATIONS": False,
                      "TESSERA_PLUGINS_AUTOLOAD": False, "TESSERA_PLUGINS_EXTRA": "tests.core.scheduler_jobs"})
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(go_file) and time.monotonic() < deadline:
        time.sleep(0.01)
    ran = 0
    for second in range(int(start), int(end) + 1, int(step)):
        ran += len(tick(app, dt.datetime.fromtimestamp(second, dt.timezone.utc)))
    app.extensions["tessera"].db.dispose()
    print(f"ran {ran}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
