"""Packaging for Tessera, a business-intelligence server with a Metabase-compatible HTTP API."""
from setuptools import Extension, find_namespace_packages, setup

DRIVER_EXTRAS = {
    "postgres": ["psycopg[binary]>=3.1,<4"],
    "mysql": ["PyMySQL>=1.1,<2"],
    # DuckDB returns TIMESTAMP WITH TIME ZONE values as pytz-aware datetimes.
    "duckdb": ["duckdb>=1.1,<3", "duckdb-engine>=0.13,<1", "pytz"],
}
# The SQLite driver's C row reader (drivers/sqlite_rows.py says why). Optional: without a compiler or
# sqlite3.h the build goes on and the driver reads rows through the sqlite3 module instead.
SQLITE_ROWS = Extension("drivers._sqlite_rows", ["drivers/_sqlite_rows.c"], libraries=["sqlite3"], optional=True)
ALL = sorted({req for reqs in DRIVER_EXTRAS.values() for req in reqs})

setup(
    name="tessera-bi",
    version="0.1.0",
    description="Business-intelligence server with a Metabase-compatible HTTP API",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    license="Apache-2.0",
    # Namespace packages, so the directories that hold only data or migration scripts (no __init__.py:
    # alembic's versions, each plugin's migrations, templates, page assets) are packages of the wheel too.
    packages=find_namespace_packages(include=["core", "core.*", "plugins", "plugins.*", "drivers", "drivers.*"],
                                     exclude=["*.__pycache__"]),
    py_modules=["wsgi"],
    ext_modules=[SQLITE_ROWS],
    # The data files every package may hold; .py files are modules already.
    package_data={"": ["*.txt", "*.mako", "*.yaml", "*.html", "*.js", "*.css"]},
    install_requires=[
        "flask>=3.0,<4",
        "pluggy>=1.5,<2",
        "SQLAlchemy>=2.0.30,<2.2",
        "pydantic>=2.7,<3",
        "authlib>=1.3,<2",
        # Embedding tokens: authlib.jose is deprecated in favour of joserfc (same author, already an authlib
        # dependency); it refuses algorithms outside the allow-list and validates time claims with leeway.
        "joserfc>=1.0,<2",
        # LDAP sign-in (plugins/sso/ldap.py): ldap3 is pure Python (no libldap headers to build against),
        # does StartTLS and LDAPS with the standard ssl module, and escapes filter values.
        "ldap3>=2.9,<3",
        "sqlglot>=30,<31",
        "openpyxl>=3.1,<4",
        # 25.1: the control_socket setting, which core.assembly.server puts in each instance's data dir.
        "gunicorn>=25.1,<28",
        "alembic>=1.13,<2",
        "orjson>=3.9,<4",
        # Serialization (plugins/serialization): YAML files for git; safe_load only, never yaml.load.
        "PyYAML>=6.0,<7",
        # argon2id is the password hash security.md asks for (OWASP's first choice); argon2-cffi
        # is the maintained binding, and hand-rolling a KDF is not an option.
        "argon2-cffi>=23.1,<26",
        # Fernet (authenticated encryption) for connection details at rest; never hand-rolled crypto.
        "cryptography>=42",
        # Charts (core.charts): vl-convert bundles Vega-Lite, a JS runtime and fonts, so drawing a card as
        # SVG/PNG/PDF needs no browser, no network and no system font; a dependency, not an extra.
        "vl-convert-python>=1.6,<2",
        # core.outbound.http: urllib3 connects to an address we checked while keeping TLS SNI and the
        # certificate check on the host name (server_hostname/assert_hostname), with no proxy from the
        # environment; the SSRF guard needs that pinning, which the standard library makes awkward.
        "urllib3>=2.3,<3",
        # The scheduler (core.schedule): APScheduler's cron triggers (zones, DST, Quartz-like day rules)
        # and its background/blocking schedulers drive the runs; the app DB holds jobs and claims runs.
        "APScheduler>=3.11,<4",
        # HTTP actions' response_handle/error_handle are jq expressions (Metabase runs them with jackson-jq);
        # the jq package binds the real jq library instead of a reimplementation of its language.
        "jq>=1.6,<2",
        # The x-ray templates (plugins/xrays/templates) are YAML, as Metabase's are: readable and
        # commented by the people who write them; safe_load only.
        "PyYAML>=6,<7",
        # A scheduled subscription e-mail is retried through a mail-server outage with exponential back-off
        # (plugins/subscriptions/retry.py); tenacity is the maintained retry library (stop, wait, jitter rules).
        "tenacity>=8.2,<10",
        # Dashboard text cards in the web app (plugins/app/markdown.py): markdown-it-py is the maintained
        # CommonMark parser of the Executable Books project; with raw HTML off it escapes every tag.
        "markdown-it-py>=3,<5",
    ],
    extras_require={
        **DRIVER_EXTRAS,
        "all": ALL,
        # schemathesis: tests/test_fuzz_api.py fuzzes every operation of the live OpenAPI document (4.x Python API).
        # pytest 9 keeps node ids where pytest-xdist 3.8 cannot add a group to them: every xdist_group mark
        # was ignored (two Spark JVMs, modules' fixtures built on both workers); tests/test_xdist_groups.py.
        "dev": ALL + ["pytest>=8.4,<9", "pytest-xdist>=3.6,<4", "pytest-benchmark>=4,<6", "hypothesis>=6.100,<7",
                      "schemathesis>=4.1,<5", "aiosmtpd>=1.4,<2",
                      # tests/plugins/test_openapi.py checks the live OpenAPI document against the 3.1
                      # specification (path templates and declared parameters agree, schemas are valid).
                      "openapi-spec-validator>=0.7,<1",
                      # The lint in ruff.toml (`make lint`); pinned to a minor so a new rule set does not fail a clean tree.
                      "ruff>=0.17,<0.18",
                      # tests/test_packaging.py builds the sdist and wheel as a deployment would (`python -m build`).
                      "build>=1.2,<2"],
    },
    entry_points={"console_scripts": ["tessera = core.assembly.cli:main"]},
)
