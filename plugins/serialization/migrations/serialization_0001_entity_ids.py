"""serialization: every existing row of a table with an entity_id column gets one (generated once)

Revision ID: serialization_0001
Revises:
"""
from alembic import op

from plugins.serialization.entity_ids import backfill

revision = 'serialization_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    backfill(op.get_bind())


def downgrade() -> None:
    pass  # ids given stay: they are content, and Metabase keeps them too
