"""Drivers: the contract a database engine plugin implements, and connecting to data sources.

Owns the Driver and SQLDriver bases, connection forms (Details models), the records introspection
and execution return, the connection policy (allowed file paths, the app DB never a source),
locked-down engines and their pools, connection secrets at rest, and statement deadlines. Engine
knowledge lives in drivers/*, never here.

This package's namespace is the API for driver packages (built-in and third-party): import from
`core.driver` (`from core.driver import SQLDriver, NetworkDetails, QueryError`). The core's own
modules import from the submodules: contract (Driver, Details forms), records (what introspection and
execution return, driver errors), sources (which files may be sources), sql (SQLDriver), connections
(locked-down engines and pools), crypto (details at rest), deadlines and disconnects (stopping
statements).
"""
from core.driver.contract import (
                                 OFF_ONLY_KEYS,
                                 SECRET_MASK,
                                 UI_ONLY_KEYS,
                                 Details,
                                 Driver,
                                 FileDetails,
                                 NetworkDetails,
)
from core.driver.records import (
                                 ColumnMeta,
                                 CsvLayout,
                                 FieldMeta,
                                 FKMeta,
                                 LockdownError,
                                 QueryError,
                                 QueryResult,
                                 QueryTimeout,
                                 TableMeta,
)
from core.driver.sources import ConnectionPolicy, check_file_path
from core.driver.sql import SQLDriver

__all__ = ["OFF_ONLY_KEYS", "SECRET_MASK", "UI_ONLY_KEYS", "Details", "Driver", "FileDetails", "NetworkDetails",
           "ColumnMeta", "CsvLayout", "FieldMeta", "FKMeta", "LockdownError", "QueryError", "QueryResult",
           "QueryTimeout", "TableMeta", "ConnectionPolicy", "check_file_path", "SQLDriver"]
