"""collections: archive operations and the sample flag

Revision ID: 0008
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.add_column(sa.Column('archive_operation_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('is_sample', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.drop_column('is_sample')
        batch_op.drop_column('archive_operation_id')
