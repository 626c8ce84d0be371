"""dashboards: their names and descriptions in the search index (core.appdb.search_index), kept by
triggers on report_dashboard and filled for the existing dashboards

Revision ID: dashboards_0002
Revises: dashboards_0001
"""
from alembic import op

from core.appdb import search_index

revision = 'dashboards_0002'
down_revision = 'dashboards_0001'
branch_labels = None
depends_on = None

MODEL, TABLE, COLUMNS = "dashboard", "report_dashboard", ("name", "description")


def upgrade() -> None:
    search_index.create_triggers(op.get_bind(), MODEL, TABLE, COLUMNS)


def downgrade() -> None:
    search_index.drop_triggers(op.get_bind(), MODEL, TABLE)
