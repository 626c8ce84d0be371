# Tessera: `make run` starts on the embedded defaults, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-setup lint bench bench-http clean

$(STAMP): setup.py drivers/_sqlite_rows.c contrib/tessera-driver-spark/setup.py contrib/tessera-driver-clickhouse/setup.py contrib/tessera-driver-trino/setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	# Contrib drivers install as a third party's would (their own setup.py, entry point, dependencies).
	$(BIN)/pip install --quiet -e ./contrib/tessera-driver-spark
	$(BIN)/pip install --quiet -e './contrib/tessera-driver-clickhouse[test]' -e ./contrib/tessera-driver-trino
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/tessera run --host 0.0.0.0 --port 3000

# One pytest-xdist worker per core (TEST_WORKERS=0 runs in this process); --dist loadgroup keeps each
# xdist_group on one worker (the Spark tests share one local Spark JVM) and starts the groups first.
TEST_WORKERS ?= auto
test: $(STAMP) test-setup
	$(BIN)/python -m pytest -c tests/pytest.ini --rootdir . -q -n $(TEST_WORKERS) --dist loadgroup tests contrib

# The browser tests of the public and embed pages (tests/plugins/sharing/test_pages_browser.py) drive
# Debian's chromium package; installed here when we are root and apt-get exists. Without it those
# tests skip, naming the package, and everything else still runs.
test-setup:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y chromium || { apt-get update && apt-get install -y chromium; } || true; \
	  fi; \
	fi; \
	if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  echo "chromium not found: the browser tests will skip (install the Debian package: sudo apt-get install chromium)"; \
	fi

# The checks in ruff.toml: no unused or redefined names, imports sorted.
lint: $(STAMP)
	$(BIN)/ruff check --select F,I core plugins drivers bench contrib tests

bench: $(STAMP)
	$(BIN)/python -m bench

# The many-people reads over HTTP (issue 29, the headline), issue 15's one-user figures (wrk against
# gunicorn), then the query and export benchmarks; every one runs even if an earlier one fails, and the
# target fails if any did.
bench-http: $(STAMP)
	@if ! command -v wrk >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }; \
	  fi; \
	fi; \
	if ! command -v wrk >/dev/null 2>&1; then \
	  echo "bench-http needs wrk on PATH: install the Debian/Ubuntu package (sudo apt-get install wrk)"; exit 1; \
	fi
	@status=0; \
	$(BIN)/python -m bench.http_people || status=1; \
	$(BIN)/python -m bench.http_bench || status=1; \
	$(BIN)/python -m bench.bench_query || status=1; \
	$(BIN)/python -m bench.bench_export || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) build *.egg-info
