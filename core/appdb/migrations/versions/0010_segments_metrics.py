"""segments and legacy metrics

Revision ID: 0010
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0010'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('metric',
    sa.Column('table_id', sa.Integer(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('how_is_this_calculated', sa.Text(), nullable=True),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('definition', sa.JSON(), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('show_in_getting_started', sa.Boolean(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_metric_creator_id_core_user')),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_metric_table_id_metabase_table'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metric')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_metric_entity_id'))
    )
    with op.batch_alter_table('metric', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_metric_table_id'), ['table_id'], unique=False)

    op.create_table('segment',
    sa.Column('table_id', sa.Integer(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('definition', sa.JSON(), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('show_in_getting_started', sa.Boolean(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_segment_creator_id_core_user')),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_segment_table_id_metabase_table'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_segment')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_segment_entity_id'))
    )
    with op.batch_alter_table('segment', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_segment_table_id'), ['table_id'], unique=False)

    op.create_table('metric_important_field',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('metric_id', sa.Integer(), nullable=False),
    sa.Column('field_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['field_id'], ['metabase_field.id'], name=op.f('fk_metric_important_field_field_id_metabase_field'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['metric_id'], ['metric.id'], name=op.f('fk_metric_important_field_metric_id_metric'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metric_important_field')),
    sa.UniqueConstraint('metric_id', 'field_id', name=op.f('uq_metric_important_field_metric_id_field_id'))
    )
    with op.batch_alter_table('metric_important_field', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_metric_important_field_metric_id'), ['metric_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('metric_important_field', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_metric_important_field_metric_id'))

    op.drop_table('metric_important_field')
    with op.batch_alter_table('segment', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_segment_table_id'))

    op.drop_table('segment')
    with op.batch_alter_table('metric', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_metric_table_id'))

    op.drop_table('metric')
