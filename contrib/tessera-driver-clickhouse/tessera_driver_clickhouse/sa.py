"""A small SQLAlchemy dialect over the transport adapter (tessera_driver_clickhouse.transport).

Tessera runs text() statements and inspects through the driver's own catalog queries, so the dialect
needs little: no transactions, pyformat parameters, and DDL in ClickHouse's form (MergeTree tables
ordered by the primary key, nullable columns as Nullable(T), no foreign keys), which is what lets
tests create and fill their tables with plain SQLAlchemy metadata. `initialize` runs no statement,
so a connection's first statement is the caller's (a chDB session takes its timeout before that).
"""
from __future__ import annotations

from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import registry
from sqlalchemy.engine import default
from sqlalchemy.sql import compiler


class TypeCompiler(compiler.GenericTypeCompiler):
    def visit_integer(self, type_, **kw):
        return "Int32"

    def visit_big_integer(self, type_, **kw):
        return "Int64"

    def visit_small_integer(self, type_, **kw):
        return "Int16"

    def visit_float(self, type_, **kw):
        return "Float64"

    visit_double = visit_float

    def visit_numeric(self, type_, **kw):
        return f"Decimal({type_.precision or 38}, {type_.scale or 0})"

    visit_DECIMAL = visit_NUMERIC = visit_numeric

    def visit_boolean(self, type_, **kw):
        return "Bool"

    def visit_date(self, type_, **kw):
        return "Date32"

    def visit_datetime(self, type_, **kw):
        return "DateTime64(6)"

    def visit_time(self, type_, **kw):
        return "Time"

    def visit_string(self, type_, **kw):
        return "String"

    visit_text = visit_unicode = visit_unicode_text = visit_VARCHAR = visit_string


class DDLCompiler(compiler.DDLCompiler):
    def get_column_specification(self, column, **kw):
        kind = self.dialect.type_compiler_instance.process(column.type, type_expression=column)
        if column.nullable and not column.primary_key:
            kind = f"Nullable({kind})"
        return f"{self.preparer.format_column(column)} {kind}"

    def create_table_constraints(self, table, **kw):
        return ""  # keys become the ORDER BY below; ClickHouse has no foreign keys

    def post_create_table(self, table):
        keys = ", ".join(self.preparer.format_column(c) for c in table.primary_key.columns)
        return f"\nENGINE = MergeTree ORDER BY ({keys})" if keys else "\nENGINE = MergeTree ORDER BY tuple()"

    def visit_drop_table(self, drop, **kw):
        return f"\nDROP TABLE {self.preparer.format_table(drop.element)}"


class ClickHouseDialect(default.DefaultDialect):
    name = "tessera_clickhouse"
    driver = "adapter"
    paramstyle = "pyformat"
    positional = False
    supports_statement_cache = True
    supports_native_boolean = True
    supports_native_decimal = True
    supports_sane_rowcount = False
    supports_sane_multi_rowcount = False
    supports_multivalues_insert = True
    use_insertmanyvalues = False
    postfetch_lastrowid = False
    implicit_returning = False
    supports_alter = False
    ddl_compiler = DDLCompiler
    type_compiler_cls = TypeCompiler
    colspecs = {sqltypes.Numeric: sqltypes.Numeric}

    @classmethod
    def import_dbapi(cls):
        from . import transport

        return transport

    def initialize(self, connection):
        self.server_version_info = None
        self.default_schema_name = None
        self.default_isolation_level = None

    def do_begin(self, dbapi_connection):
        pass

    def do_commit(self, dbapi_connection):
        pass

    def do_rollback(self, dbapi_connection):
        pass

    def do_ping(self, dbapi_connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("SELECT 1")
        cursor.fetchall()
        return True

    def get_isolation_level(self, dbapi_connection):
        return None

    def has_table(self, connection, table_name, schema=None, **kw):
        from sqlalchemy import text

        sql = "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = :name"
        return bool(connection.execute(text(sql), {"name": table_name}).scalar())


registry.register("tessera_clickhouse", "tessera_driver_clickhouse.sa", "ClickHouseDialect")
