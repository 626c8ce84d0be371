"""appdb change: one change counter per app-DB table (core.appdb.changes)

Every transaction that writes a table adds one to that table's row in the same transaction; the
memo keeps an answer while the counters of the tables it read are unchanged. Rows appear on the
first write of each table (an upsert), so plugin tables need no rows of their own here.

Revision ID: 0025
Revises: 0020
"""
import sqlalchemy as sa
from alembic import op

revision = '0025'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('appdb_change',
                    sa.Column('table_name', sa.String(length=254), nullable=False),
                    sa.Column('counter', sa.BigInteger(), nullable=False),
                    sa.PrimaryKeyConstraint('table_name', name=op.f('pk_appdb_change')))


def downgrade() -> None:
    op.drop_table('appdb_change')
