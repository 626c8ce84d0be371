"""actions: action, query_action, http_action, implicit_action

Revision ID: actions_0001
Revises: 
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = 'actions_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('action',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('parameter_mappings', sa.JSON(), nullable=True),
    sa.Column('visualization_settings', sa.JSON(), nullable=False),
    sa.Column('public_uuid', sa.String(length=36), nullable=True),
    sa.Column('made_public_by_id', sa.Integer(), nullable=True),
    sa.Column('initially_published_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_action_creator_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['made_public_by_id'], ['core_user.id'], name=op.f('fk_action_made_public_by_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['model_id'], ['report_card.id'], name=op.f('fk_action_model_id_report_card'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_action')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_action_entity_id')),
    sa.UniqueConstraint('public_uuid', name=op.f('uq_action_public_uuid'))
    )
    with op.batch_alter_table('action', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_action_model_id'), ['model_id'], unique=False)

    op.create_table('http_action',
    sa.Column('action_id', sa.Integer(), nullable=False),
    sa.Column('template', sa.JSON(), nullable=False),
    sa.Column('response_handle', sa.Text(), nullable=True),
    sa.Column('error_handle', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['action_id'], ['action.id'], name=op.f('fk_http_action_action_id_action'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('action_id', name=op.f('pk_http_action'))
    )
    op.create_table('implicit_action',
    sa.Column('action_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.ForeignKeyConstraint(['action_id'], ['action.id'], name=op.f('fk_implicit_action_action_id_action'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('action_id', name=op.f('pk_implicit_action'))
    )
    op.create_table('query_action',
    sa.Column('action_id', sa.Integer(), nullable=False),
    sa.Column('database_id', sa.Integer(), nullable=False),
    sa.Column('dataset_query', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['action_id'], ['action.id'], name=op.f('fk_query_action_action_id_action'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['database_id'], ['metabase_database.id'], name=op.f('fk_query_action_database_id_metabase_database'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('action_id', name=op.f('pk_query_action'))
    )
    with op.batch_alter_table('query_action', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_action_database_id'), ['database_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('query_action', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_action_database_id'))

    op.drop_table('query_action')
    op.drop_table('implicit_action')
    op.drop_table('http_action')
    with op.batch_alter_table('action', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_action_model_id'))

    op.drop_table('action')
