"""queries: SQL snippets, query statistics, result cache and execution log

Revision ID: 0006
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = '0006'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('query',
    sa.Column('query_hash', sa.String(length=64), nullable=False),
    sa.Column('average_execution_time', sa.Integer(), nullable=False),
    sa.Column('query', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('query_hash', name=op.f('pk_query'))
    )
    op.create_table('query_cache',
    sa.Column('query_hash', sa.String(length=64), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('results', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('query_hash', name=op.f('pk_query_cache'))
    )
    with op.batch_alter_table('query_cache', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_cache_updated_at'), ['updated_at'], unique=False)

    op.create_table('query_execution',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('started_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('running_time', sa.Integer(), nullable=False),
    sa.Column('result_rows', sa.Integer(), nullable=False),
    sa.Column('native', sa.Boolean(), nullable=False),
    sa.Column('context', sa.String(length=32), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('executor_id', sa.Integer(), nullable=True),
    sa.Column('card_id', sa.Integer(), nullable=True),
    sa.Column('dashboard_id', sa.Integer(), nullable=True),
    sa.Column('database_id', sa.Integer(), nullable=True),
    sa.Column('cache_hit', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['executor_id'], ['core_user.id'], name=op.f('fk_query_execution_executor_id_core_user'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_query_execution'))
    )
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_query_execution_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_query_execution_executor_id'), ['executor_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_query_execution_hash'), ['hash'], unique=False)
        batch_op.create_index(batch_op.f('ix_query_execution_started_at'), ['started_at'], unique=False)

    op.create_table('native_query_snippet',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('template_tags', sa.JSON(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_native_query_snippet_collection_id_collection'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_native_query_snippet_creator_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_native_query_snippet')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_native_query_snippet_entity_id')),
    sa.UniqueConstraint('name', name=op.f('uq_native_query_snippet_name'))
    )
    with op.batch_alter_table('native_query_snippet', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_native_query_snippet_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_native_query_snippet_creator_id'), ['creator_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('native_query_snippet', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_native_query_snippet_creator_id'))
        batch_op.drop_index(batch_op.f('ix_native_query_snippet_collection_id'))

    op.drop_table('native_query_snippet')
    with op.batch_alter_table('query_execution', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_execution_started_at'))
        batch_op.drop_index(batch_op.f('ix_query_execution_hash'))
        batch_op.drop_index(batch_op.f('ix_query_execution_executor_id'))
        batch_op.drop_index(batch_op.f('ix_query_execution_card_id'))

    op.drop_table('query_execution')
    with op.batch_alter_table('query_cache', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_query_cache_updated_at'))

    op.drop_table('query_cache')
    op.drop_table('query')

