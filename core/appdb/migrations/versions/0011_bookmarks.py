"""bookmarks

Revision ID: 0011
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0011'
down_revision = '0008'
branch_labels = None
depends_on = '0007'  # report_card


def upgrade() -> None:
    op.create_table('bookmark_ordering',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=255), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('ordering', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_bookmark_ordering_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_bookmark_ordering')),
    sa.UniqueConstraint('user_id', 'ordering', name=op.f('uq_bookmark_ordering_user_id_ordering')),
    sa.UniqueConstraint('user_id', 'type', 'item_id', name=op.f('uq_bookmark_ordering_user_id_type_item_id'))
    )
    with op.batch_alter_table('bookmark_ordering', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bookmark_ordering_user_id'), ['user_id'], unique=False)

    op.create_table('collection_bookmark',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_collection_bookmark_collection_id_collection'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_collection_bookmark_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collection_bookmark')),
    sa.UniqueConstraint('user_id', 'collection_id', name=op.f('uq_collection_bookmark_user_id_collection_id'))
    )
    with op.batch_alter_table('collection_bookmark', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_collection_bookmark_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_collection_bookmark_user_id'), ['user_id'], unique=False)

    op.create_table('card_bookmark',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('card_id', sa.Integer(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_card_bookmark_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_card_bookmark_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_card_bookmark')),
    sa.UniqueConstraint('user_id', 'card_id', name=op.f('uq_card_bookmark_user_id_card_id'))
    )
    with op.batch_alter_table('card_bookmark', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_card_bookmark_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_card_bookmark_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('card_bookmark', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_card_bookmark_user_id'))
        batch_op.drop_index(batch_op.f('ix_card_bookmark_card_id'))

    op.drop_table('card_bookmark')
    with op.batch_alter_table('collection_bookmark', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_collection_bookmark_user_id'))
        batch_op.drop_index(batch_op.f('ix_collection_bookmark_collection_id'))

    op.drop_table('collection_bookmark')
    with op.batch_alter_table('bookmark_ordering', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bookmark_ordering_user_id'))

    op.drop_table('bookmark_ordering')
