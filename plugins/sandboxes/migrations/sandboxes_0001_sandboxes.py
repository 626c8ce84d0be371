"""sandboxes: one row per group and table read only in part

Revision ID: sandboxes_0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = 'sandboxes_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('sandboxes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('group_id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.Integer(), nullable=False),
    sa.Column('card_id', sa.Integer(), nullable=True),
    sa.Column('attribute_remappings', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_sandboxes_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['group_id'], ['permissions_group.id'], name=op.f('fk_sandboxes_group_id_permissions_group'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_sandboxes_table_id_metabase_table'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sandboxes')),
    sa.UniqueConstraint('table_id', 'group_id', name=op.f('uq_sandboxes_table_id_group_id'))
    )
    with op.batch_alter_table('sandboxes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sandboxes_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_sandboxes_group_id'), ['group_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_sandboxes_table_id'), ['table_id'], unique=False)


def downgrade() -> None:
    op.drop_table('sandboxes')
