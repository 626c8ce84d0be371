"""dashboards: dashboards, tabs, dashcards, dashcard series and dashboard bookmarks

Revision ID: dashboards_0001
Revises: 
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = 'dashboards_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('report_dashboard',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('points_of_interest', sa.Text(), nullable=True),
    sa.Column('caveats', sa.Text(), nullable=True),
    sa.Column('show_in_getting_started', sa.Boolean(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('collection_position', sa.Integer(), nullable=True),
    sa.Column('position', sa.Integer(), nullable=True),
    sa.Column('width', sa.String(length=16), nullable=False),
    sa.Column('auto_apply_filters', sa.Boolean(), nullable=False),
    sa.Column('cache_ttl', sa.Integer(), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('archived_directly', sa.Boolean(), nullable=False),
    sa.Column('enable_embedding', sa.Boolean(), nullable=False),
    sa.Column('embedding_params', sa.JSON(), nullable=True),
    sa.Column('public_uuid', sa.String(length=36), nullable=True),
    sa.Column('made_public_by_id', sa.Integer(), nullable=True),
    sa.Column('initially_published_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('view_count', sa.Integer(), nullable=False),
    sa.Column('last_viewed_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_report_dashboard_collection_id_collection'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_report_dashboard_creator_id_core_user')),
    sa.ForeignKeyConstraint(['made_public_by_id'], ['core_user.id'], name=op.f('fk_report_dashboard_made_public_by_id_core_user'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_dashboard')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_report_dashboard_entity_id')),
    sa.UniqueConstraint('public_uuid', name=op.f('uq_report_dashboard_public_uuid'))
    )
    with op.batch_alter_table('report_dashboard', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_report_dashboard_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_dashboard_creator_id'), ['creator_id'], unique=False)

    op.create_table('dashboard_bookmark',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('dashboard_id', sa.Integer(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dashboard_id'], ['report_dashboard.id'], name=op.f('fk_dashboard_bookmark_dashboard_id_report_dashboard'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_dashboard_bookmark_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dashboard_bookmark')),
    sa.UniqueConstraint('user_id', 'dashboard_id', name=op.f('uq_dashboard_bookmark_user_id_dashboard_id'))
    )
    with op.batch_alter_table('dashboard_bookmark', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dashboard_bookmark_dashboard_id'), ['dashboard_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_dashboard_bookmark_user_id'), ['user_id'], unique=False)

    op.create_table('dashboard_tab',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dashboard_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dashboard_id'], ['report_dashboard.id'], name=op.f('fk_dashboard_tab_dashboard_id_report_dashboard'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dashboard_tab')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_dashboard_tab_entity_id'))
    )
    with op.batch_alter_table('dashboard_tab', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dashboard_tab_dashboard_id'), ['dashboard_id'], unique=False)

    op.create_table('report_dashboardcard',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dashboard_id', sa.Integer(), nullable=False),
    sa.Column('dashboard_tab_id', sa.Integer(), nullable=True),
    sa.Column('card_id', sa.Integer(), nullable=True),
    sa.Column('action_id', sa.Integer(), nullable=True),
    sa.Column('size_x', sa.Integer(), nullable=False),
    sa.Column('size_y', sa.Integer(), nullable=False),
    sa.Column('row', sa.Integer(), nullable=False),
    sa.Column('col', sa.Integer(), nullable=False),
    sa.Column('parameter_mappings', sa.JSON(), nullable=False),
    sa.Column('visualization_settings', sa.JSON(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_report_dashboardcard_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['dashboard_id'], ['report_dashboard.id'], name=op.f('fk_report_dashboardcard_dashboard_id_report_dashboard'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['dashboard_tab_id'], ['dashboard_tab.id'], name=op.f('fk_report_dashboardcard_dashboard_tab_id_dashboard_tab'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_report_dashboardcard')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_report_dashboardcard_entity_id'))
    )
    with op.batch_alter_table('report_dashboardcard', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_report_dashboardcard_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_dashboardcard_dashboard_id'), ['dashboard_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_report_dashboardcard_dashboard_tab_id'), ['dashboard_tab_id'], unique=False)

    op.create_table('dashboardcard_series',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dashboardcard_id', sa.Integer(), nullable=False),
    sa.Column('card_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_dashboardcard_series_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['dashboardcard_id'], ['report_dashboardcard.id'], name=op.f('fk_dashboardcard_series_dashboardcard_id_report_dashboardcard'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dashboardcard_series'))
    )
    with op.batch_alter_table('dashboardcard_series', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dashboardcard_series_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_dashboardcard_series_dashboardcard_id'), ['dashboardcard_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('dashboardcard_series', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dashboardcard_series_dashboardcard_id'))
        batch_op.drop_index(batch_op.f('ix_dashboardcard_series_card_id'))

    op.drop_table('dashboardcard_series')
    with op.batch_alter_table('report_dashboardcard', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_report_dashboardcard_dashboard_tab_id'))
        batch_op.drop_index(batch_op.f('ix_report_dashboardcard_dashboard_id'))
        batch_op.drop_index(batch_op.f('ix_report_dashboardcard_card_id'))

    op.drop_table('report_dashboardcard')
    with op.batch_alter_table('dashboard_tab', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dashboard_tab_dashboard_id'))

    op.drop_table('dashboard_tab')
    with op.batch_alter_table('dashboard_bookmark', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dashboard_bookmark_user_id'))
        batch_op.drop_index(batch_op.f('ix_dashboard_bookmark_dashboard_id'))

    op.drop_table('dashboard_bookmark')
    with op.batch_alter_table('report_dashboard', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_report_dashboard_creator_id'))
        batch_op.drop_index(batch_op.f('ix_report_dashboard_collection_id'))

    op.drop_table('report_dashboard')
