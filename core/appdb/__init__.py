"""The app database: engine and sessions, the ORM models and the Alembic migrations.

Must not know HTTP, plugins or data engines; it stores what the rest of the core and the plugins
describe.
"""
