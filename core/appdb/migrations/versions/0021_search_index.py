"""search index: the searchable text of every card, collection, database, table and segment

One table, kept in step with the content by triggers in the same transaction, and the engine's text
index over it (SQLite: FTS5 with the trigram tokenizer; PostgreSQL: pg_trgm's GIN index). Filled here
for the existing content. See core.appdb.search_index.

Revision ID: 0021
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

from core.appdb import search_index

revision = '0021'
down_revision = '0010'
branch_labels = None
depends_on = ('0007',)


def upgrade() -> None:
    op.create_table('search_index',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=32), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('model', 'model_id', name='uq_search_index_model')
    )
    bind = op.get_bind()
    search_index.setup(bind)
    for model, (table, columns) in search_index.CORE_KINDS.items():
        search_index.create_triggers(bind, model, table, columns)


def downgrade() -> None:
    bind = op.get_bind()
    for model, (table, _columns) in search_index.CORE_KINDS.items():
        search_index.drop_triggers(bind, model, table)
    op.execute("DROP TABLE IF EXISTS search_index_fts")
    op.drop_table('search_index')
