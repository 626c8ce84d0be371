"""subscriptions: alerts and notifications share the pulse tables (alert condition columns, a raw cron
per channel)

Revision ID: subscriptions_0003
Revises: subscriptions_0002
"""
import sqlalchemy as sa
from alembic import op

revision = 'subscriptions_0003'
down_revision = 'subscriptions_0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('pulse', schema=None) as batch_op:
        batch_op.add_column(sa.Column('alert_condition', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('alert_above_goal', sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column('alert_first_only', sa.Boolean(), nullable=True))
    with op.batch_alter_table('pulse_channel', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cron_schedule', sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('pulse_channel', schema=None) as batch_op:
        batch_op.drop_column('cron_schedule')
    with op.batch_alter_table('pulse', schema=None) as batch_op:
        batch_op.drop_column('alert_first_only')
        batch_op.drop_column('alert_above_goal')
        batch_op.drop_column('alert_condition')
