"""sso: single-sign-on tokens already used

Revision ID: sso_0001
Revises: 
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = 'sso_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('sso_used_token',
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('expires_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('digest', name=op.f('pk_sso_used_token'))
    )
    with op.batch_alter_table('sso_used_token', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sso_used_token_expires_at'), ['expires_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('sso_used_token', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sso_used_token_expires_at'))
    op.drop_table('sso_used_token')
