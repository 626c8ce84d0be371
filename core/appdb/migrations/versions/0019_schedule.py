"""schedule: scheduled jobs and the task history of their runs

Revision ID: 0019
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0019'
down_revision = '0014'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table('scheduled_job',
    sa.Column('id', _ID, autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=100), nullable=False),
    sa.Column('key', sa.String(length=254), nullable=False),
    sa.Column('cron', sa.String(length=120), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=True),
    sa.Column('args', sa.JSON(), nullable=False),
    sa.Column('next_fire', sa.BigInteger(), nullable=True),
    sa.Column('fire_zone', sa.String(length=64), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scheduled_job')),
    sa.UniqueConstraint('kind', 'key', name=op.f('uq_scheduled_job_kind_key'))
    )
    op.create_index(op.f('ix_scheduled_job_next_fire'), 'scheduled_job', ['next_fire'], unique=False)
    op.create_table('task_history',
    sa.Column('id', _ID, autoincrement=True, nullable=False),
    sa.Column('task', sa.String(length=254), nullable=False),
    sa.Column('db_id', sa.BigInteger(), nullable=True),
    sa.Column('job_id', sa.BigInteger(), nullable=True),
    sa.Column('fire_time', sa.BigInteger(), nullable=True),
    sa.Column('started_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ended_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('duration', sa.BigInteger(), nullable=True),
    sa.Column('status', sa.String(length=21), nullable=False),
    sa.Column('task_details', sa.JSON(), nullable=True),
    sa.Column('instance', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_history'))
    )
    for column in ('task', 'db_id', 'job_id', 'started_at', 'ended_at'):
        op.create_index(op.f(f'ix_task_history_{column}'), 'task_history', [column], unique=False)


def downgrade() -> None:
    op.drop_table('task_history')
    op.drop_index(op.f('ix_scheduled_job_next_fire'), table_name='scheduled_job')
    op.drop_table('scheduled_job')
