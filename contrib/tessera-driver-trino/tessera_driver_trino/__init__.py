"""Tessera plugin entry point: registers the Trino driver."""
from core import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_drivers():
    from .driver import TrinoDriver

    return [TrinoDriver]
