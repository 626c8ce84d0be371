"""cards: saved questions, models and metrics; revisions; persisted models

Revision ID: 0007
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0007'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('revision',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=16), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('timestamp', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('object', sa.JSON(), nullable=False),
    sa.Column('is_reversion', sa.Boolean(), nullable=False),
    sa.Column('is_creation', sa.Boolean(), nullable=False),
    sa.Column('message', sa.Text(), nullable=True),
    sa.Column('most_recent', sa.Boolean(), nullable=False),
    sa.Column('metabase_version', sa.String(length=100), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_revision_user_id_core_user'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_revision'))
    )
    with op.batch_alter_table('revision', schema=None) as batch_op:
        batch_op.create_index('ix_revision_model_model_id', ['model', 'model_id'], unique=False)
    op.create_table('report_card',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('display', sa.String(length=254), nullable=False),
    sa.Column('dataset_query', sa.JSON(), nullable=False),
    sa.Column('visualization_settings', sa.JSON(), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('parameter_mappings', sa.JSON(), nullable=False),
    sa.Column('result_metadata', sa.JSON(), nullable=True),
    sa.Column('type', sa.String(length=16), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('collection_position', sa.Integer(), nullable=True),
    sa.Column('collection_preview', sa.Boolean(), nullable=False),
    sa.Column('cache_ttl', sa.Integer(), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('archived_directly', sa.Boolean(), nullable=False),
    sa.Column('enable_embedding', sa.Boolean(), nullable=False),
    sa.Column('embedding_params', sa.JSON(), nullable=True),
    sa.Column('public_uuid', sa.String(length=36), nullable=True),
    sa.Column('made_public_by_id', sa.Integer(), nullable=True),
    sa.Column('initially_published_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('database_id', sa.Integer(), nullable=True),
    sa.Column('table_id', sa.Integer(), nullable=True),
    sa.Column('source_card_id', sa.Integer(), nullable=True),
    sa.Column('query_type', sa.String(length=16), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('view_count', sa.Integer(), nullable=False),
    sa.Column('last_used_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('cache_invalidated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_report_card_collection_id_collection'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_report_card_creator_id_core_user')),
    sa.ForeignKeyConstraint(['database_id'], ['metabase_database.id'], name=op.f('fk_report_card_database_id_metabase_database'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['made_public_by_id'], ['core_user.id'], name=op.f('fk_report_card_made_public_by_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['source_card_id'], ['report_card.id'], name=op.f('fk_report_card_source_card_id_report_card'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_report_card_table_id_metabase_table'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_card')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_report_card_entity_id')),
    sa.UniqueConstraint('public_uuid', name=op.f('uq_report_card_public_uuid'))
    )
    with op.batch_alter_table('report_card', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_report_card_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_card_creator_id'), ['creator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_card_database_id'), ['database_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_card_source_card_id'), ['source_card_id'], unique=False)

    op.create_table('persisted_info',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('database_id', sa.Integer(), nullable=False),
    sa.Column('card_id', sa.Integer(), nullable=False),
    sa.Column('question_slug', sa.Text(), nullable=False),
    sa.Column('schema_name', sa.Text(), nullable=True),
    sa.Column('table_name', sa.Text(), nullable=False),
    sa.Column('definition', sa.JSON(), nullable=True),
    sa.Column('query_hash', sa.Text(), nullable=True),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('state', sa.String(length=32), nullable=False),
    sa.Column('refresh_begin', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('refresh_end', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('state_change_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_persisted_info_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_persisted_info_creator_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['database_id'], ['metabase_database.id'], name=op.f('fk_persisted_info_database_id_metabase_database'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_persisted_info')),
    sa.UniqueConstraint('card_id', name=op.f('uq_persisted_info_card_id'))
    )
    with op.batch_alter_table('persisted_info', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_persisted_info_database_id'), ['database_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('persisted_info', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_persisted_info_database_id'))

    op.drop_table('persisted_info')
    with op.batch_alter_table('report_card', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_report_card_source_card_id'))
        batch_op.drop_index(batch_op.f('ix_report_card_database_id'))
        batch_op.drop_index(batch_op.f('ix_report_card_creator_id'))
        batch_op.drop_index(batch_op.f('ix_report_card_collection_id'))

    op.drop_table('report_card')
    with op.batch_alter_table('revision', schema=None) as batch_op:
        batch_op.drop_index('ix_revision_model_model_id')
    op.drop_table('revision')
