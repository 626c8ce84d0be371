"""tessera-driver-csv: a directory of CSV files as a read-only Tessera database, through DuckDB.

An example of a third-party driver: its own distribution, found by Tessera through the
`tessera.drivers` entry point, tested with Tessera's own DriverConformance suite.
"""
from setuptools import setup

setup(
    name="tessera-driver-csv",
    version="0.1.0",
    description="Tessera driver: a directory of CSV files as a read-only database (via DuckDB)",
    python_requires=">=3.11",
    packages=["tessera_driver_csv"],
    install_requires=["tessera-bi[duckdb]"],
    entry_points={"tessera.drivers": ["csv = tessera_driver_csv"]},
)
