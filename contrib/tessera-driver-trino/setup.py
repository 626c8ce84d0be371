"""tessera-driver-trino: Trino as a Tessera database, through the `trino` client.

A third-party driver like contrib/tessera-driver-csv: its own distribution, found through the
`tessera.drivers` entry point. No Trino server runs in its tests: the SQL it generates for every
MBQL conformance case is checked against golden files (see README.md).
"""
from setuptools import setup

setup(
    name="tessera-driver-trino",
    version="0.1.0",
    description="Tessera driver: Trino (trino client)",
    python_requires=">=3.11",
    packages=["tessera_driver_trino"],
    install_requires=["tessera-bi", "trino>=0.330"],
    entry_points={"tessera.drivers": ["trino = tessera_driver_trino"]},
)
