"""throttle: login-throttling attempts in the app DB (shared by all workers and instances)

Revision ID: 0014
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('throttle_attempt',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('throttler', sa.String(length=64), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('attempted_at', sa.Double(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_throttle_attempt'))
    )
    op.create_index('ix_throttle_attempt_throttler_key_attempted_at', 'throttle_attempt',
                    ['throttler', 'key', 'attempted_at'], unique=False)
    guard = op.create_table('throttle_guard',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('writes', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_throttle_guard'))
    )
    op.bulk_insert(guard, [{'name': 'throttle', 'writes': 0}])


def downgrade() -> None:
    op.drop_table('throttle_guard')
    op.drop_index('ix_throttle_attempt_throttler_key_attempted_at', table_name='throttle_attempt')
    op.drop_table('throttle_attempt')
