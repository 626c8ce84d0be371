"""sparksql: databases registered under the driver's first engine name, `spark`, take Metabase's `sparksql`

Revision ID: sparksql_0001
Revises:
"""
from alembic import op

revision = "sparksql_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("UPDATE metabase_database SET engine = 'sparksql' WHERE engine = 'spark'")


def downgrade() -> None:
    op.execute("UPDATE metabase_database SET engine = 'spark' WHERE engine = 'sparksql'")
