"""tessera-driver-clickhouse: ClickHouse as a Tessera database, over HTTP with clickhouse-connect.

A third-party driver like contrib/tessera-driver-csv: its own distribution, found through the
`tessera.drivers` entry point. Its tests run Tessera's conformance suites on chDB, the ClickHouse
engine embedded in Python, which the driver can also use as its connection layer (`test` extra).
"""
from setuptools import setup

setup(
    name="tessera-driver-clickhouse",
    version="0.1.0",
    description="Tessera driver: ClickHouse (clickhouse-connect; chDB for embedded use and tests)",
    python_requires=">=3.11",
    packages=["tessera_driver_clickhouse"],
    install_requires=["tessera-bi", "clickhouse-connect>=0.8"],
    extras_require={"chdb": ["chdb>=3.0", "pyarrow>=14"], "test": ["chdb>=3.0", "pyarrow>=14"]},
    entry_points={"tessera.drivers": ["clickhouse = tessera_driver_clickhouse"]},
)
