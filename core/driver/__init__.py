"""Drivers: the contract a database engine plugin implements, and connecting to data sources.

Owns the Driver and SQLDriver bases, connection forms (Details models), the records introspection
and execution return, the connection policy (allowed file paths, the app DB never a source),
locked-down engines and their pools, connection secrets at rest, and statement deadlines. Engine
knowledge lives in drivers/*, never here.
"""
