"""Alembic environment: migrates the app DB given by the config's engine or URL."""
from alembic import context
from sqlalchemy import create_engine

from core.appdb.changes import CHANGES_OPTION
from core.appdb.db import backend_of
from core.appdb.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine") or create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        # Not counted table by table (the counter table may not exist yet): AppDatabase.migrate moves
        # the catch-all once the schema is up to date.
        connection.execution_options(**{CHANGES_OPTION: ()})
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=backend_of(connection.dialect.name).batch_migrations,
            version_table=config.attributes.get("version_table", "alembic_version"),
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      version_table=config.attributes.get("version_table", "alembic_version"))
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
