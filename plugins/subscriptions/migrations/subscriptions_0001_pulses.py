"""subscriptions: pulses, their cards, channels and recipients

Revision ID: subscriptions_0001
Revises: 
"""
import sqlalchemy as sa
from alembic import op

import core.appdb.models.base

revision = 'subscriptions_0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('pulse',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('creator_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=254), nullable=True),
    sa.Column('skip_if_empty', sa.Boolean(), nullable=False),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('collection_position', sa.Integer(), nullable=True),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('dashboard_id', sa.Integer(), nullable=True),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collection.id'], name=op.f('fk_pulse_collection_id_collection'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['creator_id'], ['core_user.id'], name=op.f('fk_pulse_creator_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pulse')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_pulse_entity_id'))
    )
    with op.batch_alter_table('pulse', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pulse_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_pulse_creator_id'), ['creator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_pulse_dashboard_id'), ['dashboard_id'], unique=False)

    op.create_table('pulse_channel',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pulse_id', sa.Integer(), nullable=False),
    sa.Column('channel_type', sa.String(length=32), nullable=False),
    sa.Column('channel_id', sa.Integer(), nullable=True),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('schedule_type', sa.String(length=32), nullable=False),
    sa.Column('schedule_hour', sa.Integer(), nullable=True),
    sa.Column('schedule_day', sa.String(length=64), nullable=True),
    sa.Column('schedule_frame', sa.String(length=32), nullable=True),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.Column('created_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', core.appdb.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['pulse_id'], ['pulse.id'], name=op.f('fk_pulse_channel_pulse_id_pulse'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pulse_channel')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_pulse_channel_entity_id'))
    )
    with op.batch_alter_table('pulse_channel', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pulse_channel_pulse_id'), ['pulse_id'], unique=False)

    op.create_table('pulse_card',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pulse_id', sa.Integer(), nullable=False),
    sa.Column('card_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('include_csv', sa.Boolean(), nullable=False),
    sa.Column('include_xls', sa.Boolean(), nullable=False),
    sa.Column('format_rows', sa.Boolean(), nullable=False),
    sa.Column('pivot_results', sa.Boolean(), nullable=False),
    sa.Column('dashboard_card_id', sa.Integer(), nullable=True),
    sa.Column('entity_id', sa.String(length=21), nullable=True),
    sa.ForeignKeyConstraint(['card_id'], ['report_card.id'], name=op.f('fk_pulse_card_card_id_report_card'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['pulse_id'], ['pulse.id'], name=op.f('fk_pulse_card_pulse_id_pulse'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pulse_card')),
    sa.UniqueConstraint('entity_id', name=op.f('uq_pulse_card_entity_id'))
    )
    with op.batch_alter_table('pulse_card', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pulse_card_card_id'), ['card_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_pulse_card_pulse_id'), ['pulse_id'], unique=False)

    op.create_table('pulse_channel_recipient',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pulse_channel_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['pulse_channel_id'], ['pulse_channel.id'], name=op.f('fk_pulse_channel_recipient_pulse_channel_id_pulse_channel'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['core_user.id'], name=op.f('fk_pulse_channel_recipient_user_id_core_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pulse_channel_recipient'))
    )
    with op.batch_alter_table('pulse_channel_recipient', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pulse_channel_recipient_pulse_channel_id'), ['pulse_channel_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_pulse_channel_recipient_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('pulse_channel_recipient', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pulse_channel_recipient_user_id'))
        batch_op.drop_index(batch_op.f('ix_pulse_channel_recipient_pulse_channel_id'))

    op.drop_table('pulse_channel_recipient')
    with op.batch_alter_table('pulse_card', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pulse_card_pulse_id'))
        batch_op.drop_index(batch_op.f('ix_pulse_card_card_id'))

    op.drop_table('pulse_card')
    with op.batch_alter_table('pulse_channel', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pulse_channel_pulse_id'))

    op.drop_table('pulse_channel')
    with op.batch_alter_table('pulse', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pulse_dashboard_id'))
        batch_op.drop_index(batch_op.f('ix_pulse_creator_id'))
        batch_op.drop_index(batch_op.f('ix_pulse_collection_id'))

    op.drop_table('pulse')
