"""timelines: timelines and their events

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('timeline',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('icon', sa.String(length=128), nullable=True),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('default', sa.Boolean(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_timeline_collection_id_collection'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_timeline_creator_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_timeline')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_timeline_entity_id'))
    )
    with op.batch_alter_table('timeline', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_timeline_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_timeline_creator_id'), ['creator_id'], unique=False)

    op.create_table('timeline_event',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('timeline_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('timestamp', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('time_matters', sa.Boolean(), nullable=False),
    sa.Column('timezone', sa.String(length=255), nullable=False),
    sa.Column('icon', sa.String(length=128), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_timeline_event_creator_id_core_user'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['timeline_id'], ['timeline.id'], name=op.f('fk_timeline_event_timeline_id_timeline'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_timeline_event'))
    )
    with op.batch_alter_table('timeline_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_timeline_event_creator_id'), ['creator_id'], unique=False)
        batch_op.create_index('ix_timeline_event_timeline_id_timestamp', ['timeline_id', 'timestamp'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('timeline_event', schema=None) as batch_op:
        batch_op.drop_index('ix_timeline_event_timeline_id_timestamp')
        batch_op.drop_index(batch_op.f('ix_timeline_event_creator_id'))

    op.drop_table('timeline_event')
    with op.batch_alter_table('timeline', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_timeline_creator_id'))
        batch_op.drop_index(batch_op.f('ix_timeline_collection_id'))

    op.drop_table('timeline')
