"""data model

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('metabase_database',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('engine', sa.String(length=254), nullable=False),
    sa.Column('details', sa.Text(), nullable=False),
    sa.Column('is_sample', sa.Boolean(), nullable=False),
    sa.Column('is_full_sync', sa.Boolean(), nullable=False),
    sa.Column('is_on_demand', sa.Boolean(), nullable=False),
    sa.Column('is_audit', sa.Boolean(), nullable=False),
    sa.Column('auto_run_queries', sa.Boolean(), nullable=False),
    sa.Column('refingerprint', sa.Boolean(), nullable=True),
    sa.Column('cache_ttl', sa.Integer(), nullable=True),
    sa.Column('timezone', sa.String(length=254), nullable=True),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('settings', sa.JSON(), nullable=True),
    sa.Column('dbms_version', sa.JSON(), nullable=True),
    sa.Column('metadata_sync_schedule', sa.String(length=254), nullable=False),
    sa.Column('cache_field_values_schedule', sa.String(length=254), nullable=False),
    sa.Column('initial_sync_status', sa.String(length=32), nullable=False),
    sa.Column('sync_error', sa.Text(), nullable=True),
    sa.Column('uploads_enabled', sa.Boolean(), nullable=False),
    sa.Column('uploads_schema_name', sa.Text(), nullable=True),
    sa.Column('uploads_table_prefix', sa.Text(), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_metabase_database_creator_id_core_user'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metabase_database')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_metabase_database_entity_id'))
    )
    op.create_table('metabase_table',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('db_id', sa.Integer(), nullable=False),
    sa.Column('schema', sa.String(length=254), nullable=True),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('display_name', sa.String(length=254), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('entity_type', sa.String(length=254), nullable=True),
    sa.Column('visibility_type', sa.String(length=254), nullable=True),
    sa.Column('field_order', sa.String(length=254), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('show_in_getting_started', sa.Boolean(), nullable=False),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('initial_sync_status', sa.String(length=32), nullable=False),
    sa.Column('estimated_row_count', sa.Integer(), nullable=True),
    sa.Column('is_upload', sa.Boolean(), nullable=False),
    sa.Column('database_require_filter', sa.Boolean(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['db_id'], ['metabase_database.id'], name=op.f('fk_metabase_table_db_id_metabase_database'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metabase_table')),
    sa.UniqueConstraint('db_id', 'schema', 'name', name=op.f('uq_metabase_table_db_id_schema_name')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_metabase_table_entity_id'))
    )
    with op.batch_alter_table('metabase_table', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_metabase_table_db_id'), ['db_id'], unique=False)

    op.create_table('metabase_field',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.Integer(), nullable=False),
    sa.Column('parent_id', sa.Integer(), nullable=True),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('display_name', sa.String(length=254), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('database_type', sa.Text(), nullable=False),
    sa.Column('base_type', sa.String(length=255), nullable=False),
    sa.Column('effective_type', sa.String(length=255), nullable=True),
    sa.Column('semantic_type', sa.String(length=255), nullable=True),
    sa.Column('coercion_strategy', sa.String(length=255), nullable=True),
    sa.Column('fk_target_field_id', sa.Integer(), nullable=True),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('visibility_type', sa.String(length=32), nullable=False),
    sa.Column('has_field_values', sa.String(length=32), nullable=True),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('database_position', sa.Integer(), nullable=False),
    sa.Column('custom_position', sa.Integer(), nullable=False),
    sa.Column('database_is_auto_increment', sa.Boolean(), nullable=False),
    sa.Column('database_required', sa.Boolean(), nullable=False),
    sa.Column('database_indexed', sa.Boolean(), nullable=True),
    sa.Column('json_unfolding', sa.Boolean(), nullable=False),
    sa.Column('nfc_path', sa.JSON(), nullable=True),
    sa.Column('settings', sa.JSON(), nullable=True),
    sa.Column('fingerprint', sa.JSON(), nullable=True),
    sa.Column('fingerprint_version', sa.Integer(), nullable=False),
    sa.Column('last_analyzed', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('preview_display', sa.Boolean(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['fk_target_field_id'], ['metabase_field.id'], name=op.f('fk_metabase_field_fk_target_field_id_metabase_field'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['parent_id'], ['metabase_field.id'], name=op.f('fk_metabase_field_parent_id_metabase_field'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_metabase_field_table_id_metabase_table'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metabase_field')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_metabase_field_entity_id')),
    sa.UniqueConstraint('table_id', 'parent_id', 'name', name=op.f('uq_metabase_field_table_id_parent_id_name'))
    )
    with op.batch_alter_table('metabase_field', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_metabase_field_table_id'), ['table_id'], unique=False)

    op.create_table('dimension',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('field_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('human_readable_field_id', sa.Integer(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['field_id'], ['metabase_field.id'], name=op.f('fk_dimension_field_id_metabase_field'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['human_readable_field_id'], ['metabase_field.id'], name=op.f('fk_dimension_human_readable_field_id_metabase_field'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dimension')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_dimension_entity_id')),
    sa.UniqueConstraint('field_id', name=op.f('uq_dimension_field_id'))
    )
    op.create_table('metabase_fieldvalues',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('field_id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('hash_key', sa.String(length=255), nullable=False),
    sa.Column('values', sa.JSON(), nullable=True),
    sa.Column('human_readable_values', sa.JSON(), nullable=True),
    sa.Column('has_more_values', sa.Boolean(), nullable=False),
    sa.Column('last_used_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['field_id'], ['metabase_field.id'], name=op.f('fk_metabase_fieldvalues_field_id_metabase_field'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metabase_fieldvalues')),
    sa.UniqueConstraint('field_id', 'type', 'hash_key', name=op.f('uq_metabase_fieldvalues_field_id_type_hash_key'))
    )
    with op.batch_alter_table('metabase_fieldvalues', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_metabase_fieldvalues_field_id'), ['field_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('metabase_fieldvalues', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_metabase_fieldvalues_field_id'))

    op.drop_table('metabase_fieldvalues')
    op.drop_table('dimension')
    with op.batch_alter_table('metabase_field', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_metabase_field_table_id'))

    op.drop_table('metabase_field')
    with op.batch_alter_table('metabase_table', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_metabase_table_db_id'))

    op.drop_table('metabase_table')
    op.drop_table('metabase_database')
