"""identity: permission rows and graph revisions, API keys, reset tokens on users

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('permissions_graph_revision',
    sa.Column('graph', sa.String(length=32), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('graph', name=op.f('pk_permissions_graph_revision'))
    )
    op.create_table('api_key',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('key_prefix', sa.String(length=7), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('scope', sa.String(length=64), nullable=True),
    sa.Column('creator_id', sa.Integer(), nullable=True),
    sa.Column('updated_by_id', sa.Integer(), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_api_key_creator_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['updated_by_id'], ['core_user.id'], name=op.f('fk_api_key_updated_by_id_core_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_api_key_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_key')),
    sa.UniqueConstraint('key_prefix', name=op.f('uq_api_key_key_prefix')),
    sa.UniqueConstraint('name', name=op.f('uq_api_key_name')),
    sa.UniqueConstraint('user_id', name=op.f('uq_api_key_user_id'))
    )
    op.create_table('permissions_revision',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('graph', sa.String(length=32), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('before', sa.JSON(), nullable=True),
    sa.Column('after', sa.JSON(), nullable=True),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('remark', sa.Text(), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_permissions_revision_user_id_core_user'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_permissions_revision'))
    )
    op.create_table('collection_permission',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('group_id', sa.Integer(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('namespace', sa.String(length=254), nullable=False),
    sa.Column('level', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_collection_permission_collection_id_collection'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['group_id'], ['permissions_group.id'], name=op.f('fk_collection_permission_group_id_permissions_group'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_collection_permission'))
    )
    with op.batch_alter_table('collection_permission', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_collection_permission_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_collection_permission_group_id'), ['group_id'], unique=False)

    op.create_table('data_permission',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('group_id', sa.Integer(), nullable=False),
    sa.Column('db_id', sa.Integer(), nullable=False),
    sa.Column('perm_type', sa.String(length=64), nullable=False),
    sa.Column('schema_name', sa.String(length=254), nullable=True),
    sa.Column('table_id', sa.Integer(), nullable=True),
    sa.Column('perm_value', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['db_id'], ['metabase_database.id'], name=op.f('fk_data_permission_db_id_metabase_database'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['group_id'], ['permissions_group.id'], name=op.f('fk_data_permission_group_id_permissions_group'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['table_id'], ['metabase_table.id'], name=op.f('fk_data_permission_table_id_metabase_table'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_data_permission'))
    )
    with op.batch_alter_table('data_permission', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_data_permission_db_id'), ['db_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_data_permission_group_id'), ['group_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_data_permission_table_id'), ['table_id'], unique=False)

    with op.batch_alter_table('core_user', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reset_token', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('reset_triggered', core.appdb.models.base.UTCDateTime(timezone=True), nullable=True))

    # One revision counter per graph; the graph PUTs compare-and-increment it.
    revisions = sa.table("permissions_graph_revision", sa.column("graph", sa.String), sa.column("revision", sa.Integer))
    op.bulk_insert(revisions, [{"graph": g, "revision": 0} for g in ("data", "execution", "collection")])
    # Metabase's fresh-instance defaults: All Users may curate the root collection (and snippets).
    collection_perms = sa.table("collection_permission", sa.column("group_id", sa.Integer),
                                sa.column("collection_id", sa.Integer), sa.column("namespace", sa.String),
                                sa.column("level", sa.String))
    op.bulk_insert(collection_perms, [{"group_id": 1, "collection_id": None, "namespace": ns, "level": "write"}
                                      for ns in ("", "snippets")])
    # Databases registered before this revision get the defaults a new database gets.
    bind = op.get_bind()
    data_perms = sa.table("data_permission", sa.column("group_id", sa.Integer), sa.column("db_id", sa.Integer),
                          sa.column("perm_type", sa.String), sa.column("schema_name", sa.String),
                          sa.column("table_id", sa.Integer), sa.column("perm_value", sa.String))
    from core.appdb.models.permissions import NEW_DATABASE_DEFAULTS
    db_ids = [row[0] for row in bind.execute(sa.text("SELECT id FROM metabase_database"))]
    if db_ids:
        op.bulk_insert(data_perms, [{"group_id": 1, "db_id": db_id, "perm_type": t, "schema_name": None,
                                     "table_id": None, "perm_value": v}
                                    for db_id in db_ids for t, v in NEW_DATABASE_DEFAULTS.items()])


def downgrade() -> None:
    with op.batch_alter_table('core_user', schema=None) as batch_op:
        batch_op.drop_column('reset_triggered')
        batch_op.drop_column('reset_token')

    with op.batch_alter_table('data_permission', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_data_permission_table_id'))
        batch_op.drop_index(batch_op.f('ix_data_permission_group_id'))
        batch_op.drop_index(batch_op.f('ix_data_permission_db_id'))

    op.drop_table('data_permission')
    with op.batch_alter_table('collection_permission', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_collection_permission_group_id'))
        batch_op.drop_index(batch_op.f('ix_collection_permission_collection_id'))

    op.drop_table('collection_permission')
    op.drop_table('permissions_revision')
    op.drop_table('api_key')
    op.drop_table('permissions_graph_revision')
