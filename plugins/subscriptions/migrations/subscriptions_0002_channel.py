"""subscriptions: webhook destinations (/api/channel)

Revision ID: subscriptions_0002
Revises: subscriptions_0001
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = 'subscriptions_0002'
down_revision = 'subscriptions_0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('channel',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_channel')),
    sa.UniqueConstraint('name', name=op.f('uq_channel_name'))
    )


def downgrade() -> None:
    op.drop_table('channel')
