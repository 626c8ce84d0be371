"""recent items indexes: the caller's recent cards and dashboards found by index seeks

GET /api/activity/recent_views lists the items of the caller's newest runs. Over the executor_id index
alone that read visited every run the caller ever logged (thousands for a regular user, more for a
heavy one) on every call. With the item ahead of started_at under (executor_id, context), each
distinct item and its newest run are one seek apiece (plugins.activity.service). Both indexes lead with
executor_id, so they serve the lookups of its own index too (the SET NULL when a user row is deleted),
which is dropped.

Revision ID: 0026
Revises: 0025
"""
from alembic import op

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.create_index('ix_query_execution_recent_cards',
                              ['executor_id', 'context', 'card_id', 'started_at', 'dashboard_id'], unique=False)
        batch_op.create_index('ix_query_execution_recent_dashboards',
                              ['executor_id', 'context', 'dashboard_id', 'started_at'], unique=False)
        batch_op.drop_index(batch_op.f('ix_query_execution_executor_id'))


def downgrade() -> None:
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_execution_executor_id'), ['executor_id'], unique=False)
        batch_op.drop_index('ix_query_execution_recent_dashboards')
        batch_op.drop_index('ix_query_execution_recent_cards')
