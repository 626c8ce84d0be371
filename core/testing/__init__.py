"""Test fixtures for Tessera and for third-party plugins and drivers (a pytest plugin).

Load it with `pytest_plugins = ["core.testing"]`: pytest takes the fixtures from this namespace, so
every fixture and helper of app (the app and its clients), services (PostgreSQL, MariaDB and SMTP on
loopback), http_server (an HTTP(S) server on loopback that keeps requests) and conformance
(DriverConformance) is imported here. The app DB of each test is a copy of one
SQLite file migrated once per session, so a test costs a file copy, not a migration run.
"""
from core.testing.app import (  # noqa: F401
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    FAST_HASHING,
    USER_PASSWORD,
    ApiClient,
    add_collection,
    add_database,
    admin,
    any_app,
    app,
    app_config,
    app_db_template,
    backend_config,
    client,
    make_user,
    postgres_app_db,
    postgres_app_db_copy,
    postgres_app_db_template,
    sample_database_file,
    sample_database_template,
    set_setting,
    setup_admin,
    sqlite_file,
    user,
    wait_for_sync,
)
from core.testing.conformance import (  # noqa: F401
    ORDERS,
    PEOPLE,
    WRITE_STATEMENTS,
    ConformanceTarget,
    DriverConformance,
    conformance_schema,
    feature_probes,
    register_synced,
    synced_ids,
)
from core.testing.http_server import HttpSink, Received, http_server, make_http_server  # noqa: F401
from core.testing.services import (  # noqa: F401
    MARIADB_HOST,
    MARIADB_PORT,
    POSTGRES_HOST,
    POSTGRES_PORT,
    DataSource,
    SmtpSink,
    mariadb_data_source,
    postgres_data_source,
    require_mariadb,
    require_postgres,
    server_answers,
    smtp_server,
)
