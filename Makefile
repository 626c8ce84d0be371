# Tessera: `make run` starts on the embedded defaults, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs what serving needs (pip install -e .); `make test` adds the dev extra (the three
# database drivers, pytest, schemathesis, ruff, build) and the contrib drivers (pyspark and chdb are
# about 1 GB together). One venv: a `make run` after `make test` installs nothing.
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
# `make run PORT=3001 HOST=0.0.0.0`; TESSERA_PORT/TESSERA_HOST from the environment work too. Loopback by
# default: the first start prints the setup token, which must not be reachable from the network.
HOST ?= $(or $(TESSERA_HOST),127.0.0.1)
PORT ?= $(or $(TESSERA_PORT),3000)

# pipefail: the install recipes filter pip's output and must still fail when pip does.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: install install-test run test test-setup lint bench bench-http clean

# pip's output cut to one line per package it collects or builds (the whole log is .venv/pip.log, and its
# tail is shown when pip fails).
define pip_install
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off $(1) 2>&1 | tee -a $(VENV)/pip.log \
	  | { grep --line-buffered -E '^(Collecting|Processing|Building|Installing collected|Successfully installed)' || true; } \
	  | cut -c1-110 | sed 's/^/    /' \
	  || { echo "pip failed; the end of $(VENV)/pip.log:"; tail -n 30 $(VENV)/pip.log; exit 1; }
endef

$(VENV)/pyvenv.cfg:
	@echo "tessera: creating the virtualenv $(VENV) and updating pip"
	@$(PYTHON) -m venv $(VENV)
	$(call pip_install,--quiet --upgrade pip)

$(RUN_STAMP): $(VENV)/pyvenv.cfg setup.py drivers/_sqlite_rows.c
	@echo "tessera: installing Tessera and what it needs to run (pip install -e .)"
	$(call pip_install,-e .)
	@touch $@

$(TEST_STAMP): $(RUN_STAMP) contrib/tessera-driver-spark/setup.py contrib/tessera-driver-clickhouse/setup.py contrib/tessera-driver-trino/setup.py
	@echo "tessera: installing the dev extra (database drivers, test and lint tools)"
	$(call pip_install,-e '.[dev]')
	@# Contrib drivers install as a third party's would (their own setup.py, entry point, dependencies).
	@echo "tessera: installing the contrib drivers (Spark, ClickHouse, Trino)"
	$(call pip_install,-e ./contrib/tessera-driver-spark -e './contrib/tessera-driver-clickhouse[test]' -e ./contrib/tessera-driver-trino)
	@touch $@

install: $(RUN_STAMP)

install-test: $(TEST_STAMP)

run: $(RUN_STAMP)
	$(BIN)/tessera run --host $(HOST) --port $(PORT)

# One pytest-xdist worker per core (TEST_WORKERS=0 runs in this process); --dist loadgroup keeps each
# xdist_group on one worker (the Spark tests share one local Spark JVM) and starts the groups first.
TEST_WORKERS ?= auto
test: $(TEST_STAMP) test-setup
	$(BIN)/python -m pytest -c tests/pytest.ini --rootdir . -q -n $(TEST_WORKERS) --dist loadgroup tests contrib

# The browser tests of the public and embed pages (tests/plugins/sharing/test_pages_browser.py) drive
# Debian's chromium package, and the LDAP tests (tests/plugins/sso) run Debian's slapd; installed here
# when we are root and apt-get exists. Without them those tests skip, naming the package, and
# everything else still runs. The OpenID Connect tests run the npm package oidc-provider with the
# machine's Node.js: npm installs the version pinned in tests/plugins/sso/package-lock.json.
test-setup:
	@if { ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; } \
	    || { ! command -v slapd >/dev/null 2>&1 && [ ! -x /usr/sbin/slapd ]; }; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y chromium slapd ldap-utils || { apt-get update && apt-get install -y chromium slapd ldap-utils; } || true; \
	  fi; \
	fi; \
	if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  echo "chromium not found: the browser tests will skip (install the Debian package: sudo apt-get install chromium)"; \
	fi; \
	if ! command -v slapd >/dev/null 2>&1 && [ ! -x /usr/sbin/slapd ]; then \
	  echo "slapd not found: the LDAP tests will skip (install the Debian package: sudo apt-get install slapd ldap-utils)"; \
	fi; \
	if ! command -v node >/dev/null 2>&1; then \
	  echo "node not found: the OpenID Connect tests will skip (install Node.js 20 or later with npm)"; \
	elif [ ! -f tests/plugins/sso/node_modules/oidc-provider/package.json ]; then \
	  echo "tessera: installing the OpenID provider the OpenID Connect tests run (npm oidc-provider, pinned)"; \
	  npm ci --prefix tests/plugins/sso --no-audit --no-fund --loglevel=error; \
	fi

# The checks in ruff.toml: no unused or redefined names, imports sorted.
lint: $(TEST_STAMP)
	$(BIN)/ruff check --select F,I core plugins drivers bench contrib tests

bench: $(TEST_STAMP)
	$(BIN)/python -m bench

# The many-people reads over HTTP (issue 29, the headline), issue 15's one-user figures (wrk against
# gunicorn), then the query and export benchmarks; every one runs even if an earlier one fails, and the
# target fails if any did.
bench-http: $(TEST_STAMP)
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
