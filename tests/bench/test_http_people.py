"""The many-people bench's harness on its real content (the Sample Database, 40 cards, 8 dashboards) with
a few users and its Python client instead of wrk: Tessera and the hello app start under gunicorn, every
path of every scenario answers 2xx for a random user, every warmed query comes from the result cache,
the Lua script wrk would run picks a random session and path, and every server is stopped. Speed is not
asserted: this proves the harness measures what it says."""
from __future__ import annotations

import random

import pytest

from bench.http_load import Load, lua_script
from bench.http_people import parse, run
from tests.bench.servers import alive


def test_a_random_load_sends_every_session_and_path_and_wrk_picks_them_at_random():
    load = Load("GET", ("/a", "/b", "/c"), headers={"Accept": "x"}, random=True, sessions=("t1", "t2"))
    rng = random.Random(1)
    picks = [load.pick(rng, turn) for turn in range(200)]
    assert {path for path, _ in picks} == {"/a", "/b", "/c"}
    assert {headers["X-Metabase-Session"] for _, headers in picks} == {"t1", "t2"}
    assert all(headers["Accept"] == "x" for _, headers in picks)
    script = lua_script(load)
    assert 'local sessions = {"t1", "t2"}' in script and "paths[math.random(#paths)]" in script
    assert "math.randomseed" in script and 'thread:set("number"' in script
    # A fixed rotation stays a rotation.
    assert "paths[turn]" in lua_script(Load("GET", ("/a", "/b"), sessions=("t",)))



def test_every_scenario_answers_for_random_people_and_the_cache_is_hit():
    pytest.importorskip("gunicorn")
    options = parse(["--users", "3", "--client", "python", "--duration", "0.2", "--warmup", "0", "--rounds", "1",
                     "--connections", "2", "--worker-threads", "2", "--opens", "3"])
    outcome = run(options)
    checked = " ".join(outcome.checks)
    for endpoint in ("GET /api/card/", "GET /api/dashboard/", "GET /api/collection/root/items",
                     "GET /api/search?q=", "POST /api/card/", "/dashcard/"):
        assert endpoint in checked
    assert all(200 <= status < 300 for status in outcome.checks.values()), outcome.checks
    assert sum(path.startswith("GET /api/card/") for path in outcome.checks) == 40
    assert sum(path.startswith("GET /api/dashboard/") for path in outcome.checks) == 8
    assert outcome.cache_repeats == 80 and outcome.cache_hits == 80  # 40 card and 40 dashcard queries

    # Six scenarios in one round, the hello reference before and after it.
    assert len(outcome.measures) == 6 + 2
    for label, measure in outcome.measures.items():
        assert measure.requests > 0 and measure.failures == 0, label
        assert all(200 <= status < 300 for status in measure.statuses), (label, measure.statuses)
    targets = {t.name: t for t in outcome.targets}
    assert sum(name.endswith(" vs hello") for name in targets) == 6
    assert sum(name.endswith(" p99") for name in targets) == 6
    opened = targets["5-card dashboard opened like a browser, p50"]
    assert opened.ratio > 0 and "3 opens" in opened.detail
    pages = {name: (ms, detail) for name, ms, detail in outcome.latencies}
    assert set(pages) == {"page start as Metabase's frontend opens it, p50",
                          "dashboard with its metadata as Metabase's frontend opens it, p50"}
    assert all(ms > 0 and "3 opens" in detail for ms, detail in pages.values()), pages
    assert targets["repeated cached queries served from the result cache"].met
    assert outcome.pids and not any(alive(pid) for pid in outcome.pids.values()), "a server outlived the run"
