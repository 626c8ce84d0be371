"""tessera-driver-spark: Spark SQL as a Tessera database, through Spark Connect.

A third-party driver: its own distribution, found by Tessera through the `tessera.drivers` entry
point, tested with Tessera's own DriverConformance suite against a local Spark Connect server.
"""
from setuptools import setup

setup(
    name="tessera-driver-spark",
    version="0.1.0",
    description="Tessera driver: Spark SQL through Spark Connect",
    python_requires=">=3.11",
    packages=["tessera_driver_spark"],
    # The driver's own app-DB migration (the engine's former name): Alembic revisions, not a package.
    package_data={"tessera_driver_spark": ["migrations/*.py"]},
    # pyspark[connect] is the Spark Connect client (grpcio, pyarrow); the full pyspark distribution also
    # carries Spark's jars, which the tests use to start a local Spark Connect server. pandas 3 is not
    # supported by pyspark's Connect client yet (it warns on import).
    install_requires=["tessera-bi", "pyspark[connect]>=4.0,<5", "pandas>=2.2,<3"],
    entry_points={"tessera.drivers": ["sparksql = tessera_driver_spark"]},
)
