"""card run stats index: a card's average running time and last start read from an index alone

GET /api/card/:id reports the average running time and the last start of the card's runs that were
not cache hits (Metabase's average_query_time and last_query_start). Over the card_id index alone
that read visited every logged run of the card, cache hits included (hundreds of thousands under
load), on every memo miss; this index holds the filtered columns and the two read ones.

Revision ID: 0020
Revises: 0006
"""
from alembic import op

revision = '0020'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_execution_card_id'))
        batch_op.create_index('ix_query_execution_card_runs', ['card_id', 'cache_hit', 'started_at', 'running_time'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.drop_index('ix_query_execution_card_runs')
        batch_op.create_index(batch_op.f('ix_query_execution_card_id'), ['card_id'], unique=False)
