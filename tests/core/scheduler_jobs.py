"""Job kinds for the scheduler tests, loaded as an extra plugin (TESSERA_PLUGINS_EXTRA), also by the
`tessera worker` processes those tests start.

- "test-count": appends "<fire time> <pid>" to the file named by args["file"]: what really ran.
- "test-flaky": fails while args["fail"] lists the run number (counted in args["file"]), else succeeds.
- "test-wait": runs until the file args["release"] exists (at most 20 s).
"""
from __future__ import annotations

import os
import time

from core import hookimpl
from core.assembly.records import JobKind


def count(job) -> dict:
    line = f"{int(job.fired_at.timestamp())} {os.getpid()}\n"
    with open(job.args["file"], "a") as out:  # O_APPEND: lines of two processes never interleave
        out.write(line)
    return {"pid": os.getpid()}


def flaky(job) -> dict:
    path = job.args["file"]
    with open(path, "a") as out:
        out.write("x")
    with open(path) as done:
        number = len(done.read())
    if number in job.args.get("fail", ()):
        raise ValueError(f"run {number} was told to fail")
    return {"run": number}


def wait(job) -> dict:
    deadline = time.monotonic() + 20
    while not os.path.exists(job.args["release"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return {}


@hookimpl
def register_job_kinds():
    return [JobKind("test-count", count, task="test-count"),
            JobKind("test-flaky", flaky, task="test-flaky", db_id=lambda args: args.get("db_id")),
            JobKind("test-wait", wait, task="test-wait")]
