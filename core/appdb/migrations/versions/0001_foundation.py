"""foundation: users, sessions, groups, settings, collections

Revision ID: 0001
Revises: 
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('core_user',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('first_name', sa.String(length=254), nullable=True),
    sa.Column('last_name', sa.String(length=254), nullable=True),
    sa.Column('password_hash', sa.String(length=255), nullable=True),
    sa.Column('is_superuser', sa.Boolean(), nullable=False),
    sa.Column('is_active', sa.Boolean(), nullable=False),
    sa.Column('is_qbnewb', sa.Boolean(), nullable=False),
    sa.Column('is_datasetnewb', sa.Boolean(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('locale', sa.String(length=5), nullable=True),
    sa.Column('login_attributes', sa.JSON(), nullable=True),
    sa.Column('settings', sa.JSON(), nullable=True),
    sa.Column('sso_source', sa.String(length=32), nullable=True),
    sa.Column('date_joined', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_login', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_core_user')),
    sa.UniqueConstraint('email', name=op.f('uq_core_user_email'))
    )
    op.create_table('permissions_group',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_permissions_group')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_permissions_group_entity_id')),
    sa.UniqueConstraint('name', name=op.f('uq_permissions_group_name'))
    )
    op.create_table('setting',
    sa.Column('key', sa.String(length=254), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_setting'))
    )
    op.create_table('collection',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('color', sa.String(length=7), nullable=True),
    sa.Column('slug', sa.String(length=510), nullable=True),
    sa.Column('location', sa.String(length=254), nullable=False),
    sa.Column('namespace', sa.String(length=254), nullable=True),
    sa.Column('authority_level', sa.String(length=255), nullable=True),
    sa.Column('type', sa.String(length=64), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('archived_directly', sa.Boolean(), nullable=True),
    sa.Column('personal_owner_id', sa.Integer(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['personal_owner_id'], ['core_user.id'], name=op.f('fk_collection_personal_owner_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collection')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_collection_entity_id')),
    sa.UniqueConstraint('personal_owner_id', name=op.f('uq_collection_personal_owner_id'))
    )
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_collection_location'), ['location'], unique=False)

    op.create_table('core_session',
    sa.Column('id', sa.String(length=128), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('anti_csrf_token', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_core_session_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_core_session'))
    )
    with op.batch_alter_table('core_session', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_core_session_user_id'), ['user_id'], unique=False)

    op.create_table('permissions_group_membership',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('group_id', sa.Integer(), nullable=False),
    sa.Column('is_group_manager', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['group_id'], ['permissions_group.id'], name=op.f('fk_permissions_group_membership_group_id_permissions_group'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_permissions_group_membership_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_permissions_group_membership')),
    sa.UniqueConstraint('user_id', 'group_id', name=op.f('uq_permissions_group_membership_user_id_group_id'))
    )
    with op.batch_alter_table('permissions_group_membership', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_permissions_group_membership_group_id'), ['group_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_permissions_group_membership_user_id'), ['user_id'], unique=False)


    # The two groups every instance has: ids are part of the API (clients send group_id 2).
    groups = sa.table("permissions_group", sa.column("id", sa.Integer), sa.column("name", sa.String))
    op.bulk_insert(groups, [{"id": 1, "name": "All Users"}, {"id": 2, "name": "Administrators"}])
    if op.get_bind().dialect.name == "postgresql":
        op.execute("SELECT setval(pg_get_serial_sequence('permissions_group', 'id'), 2)")


def downgrade() -> None:
    with op.batch_alter_table('permissions_group_membership', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_permissions_group_membership_user_id'))
        batch_op.drop_index(batch_op.f('ix_permissions_group_membership_group_id'))

    op.drop_table('permissions_group_membership')
    with op.batch_alter_table('core_session', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_core_session_user_id'))

    op.drop_table('core_session')
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_collection_location'))

    op.drop_table('collection')
    op.drop_table('setting')
    op.drop_table('permissions_group')
    op.drop_table('core_user')
