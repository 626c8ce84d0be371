"""The HTTP benchmark's harness on a tiny table, with its Python client instead of wrk: Tessera and the
reference apps start under gunicorn, every endpoint the figures name answers 2xx, a repeated cached
query is served from the result cache on whichever worker answers, and every run is counted and torn
down. Speed is not asserted: this proves the harness measures what it says."""
from __future__ import annotations

import pytest

from bench.http_bench import parse, run
from bench.http_load import parse_wrk
from bench.http_setup import ServerDidNotStart
from tests.bench.servers import alive

WRK_OUTPUT = """Running 10s test @ http://127.0.0.1:40000/api/card/1
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    41.20ms   10.03ms 250.11ms   90.12%
    Req/Sec   390.55     40.12   480.00     70.00%
  Latency Distribution
     50%  812.00us
     75%   45.00ms
     90%   50.10ms
     99%    1.25s
  7811 requests in 10.01s, 25.11MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:    780.33
Transfer/sec:      2.51MB
"""


def test_wrk_report_is_read_with_its_units_and_failures():
    measure = parse_wrk(WRK_OUTPUT)
    assert (measure.rps, measure.requests) == (780.33, 7811)
    assert measure.p50_ms == pytest.approx(0.812) and measure.p99_ms == pytest.approx(1250)
    assert (measure.non_2xx, measure.socket_errors, measure.failures) == (4, 3, 7)
    clean = parse_wrk(WRK_OUTPUT.replace("  Socket errors: connect 0, read 2, write 0, timeout 1\n", "")
                      .replace("  Non-2xx or 3xx responses: 4\n", ""))
    assert clean.failures == 0



def test_every_endpoint_answers_through_gunicorn_and_the_cache_is_hit():
    pytest.importorskip("gunicorn")
    options = parse(["--rows", "2500", "--client", "python", "--duration", "0.2", "--warmup", "0",
                     "--connections", "2", "--cache-repeats", "2", "--worker-threads", "2", "--rounds", "2"])
    try:
        outcome = run(options)
    except ServerDidNotStart as exc:
        if exc.server == "hello":  # gunicorn itself cannot serve here; Tessera failing to start is a failure
            pytest.skip(f"gunicorn cannot start a plain Flask app here: {exc}")
        raise

    checked = " ".join(outcome.checks)
    for endpoint in ("GET /api/card/", "GET /api/dashboard/", "GET /api/collection/root/items",
                     "GET /api/search?q=orders", "GET /api/database", "POST /api/card/", "/dashcard/"):
        assert endpoint in checked
    assert all(200 <= status < 300 for status in outcome.checks.values()), outcome.checks
    assert outcome.cache_repeats == 4 and outcome.cache_hits == 4
    assert outcome.held_bytes > 2000 * 6  # the held app serves the card's 2000 rows

    # 8 scenarios twice (two rounds) and each reference before its group and after each round, each
    # with requests, only 2xx, and the server's CPU time per request.
    assert len(outcome.measures) == 8 * 2 + 2 * 3
    for label, measure in outcome.measures.items():
        assert measure.requests > 0 and measure.failures == 0, label
        assert all(200 <= status < 300 for status in measure.statuses), (label, measure.statuses)
        assert measure.server_cpu_ms is not None and measure.server_cpu_ms >= 0, label
    assert "median of 2 rounds" in outcome.targets[0].detail
    names = [t.name for t in outcome.targets]
    assert sum("vs hello" in n for n in names) == 2 and sum("vs held" in n for n in names) == 2
    assert {t.name: t.met for t in outcome.targets}["repeated cached queries served from the result cache"]
    assert len(outcome.infos) == 4 and all(ratio > 0 for _, ratio, _ in outcome.infos)

    assert set(outcome.pids) == {"tessera", "hello", "held"}
    assert not any(alive(pid) for pid in outcome.pids.values()), "a gunicorn master outlived the run"
