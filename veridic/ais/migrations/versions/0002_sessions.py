"""Server-side login sessions (revocable: logout, password change, expiry).

Revision ID: 0002_sessions
Revises: 0001_initial
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_sessions"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ais_sessions",
        # sha256 of the cookie's random token: a copy of the database does not hand out live cookies
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("annotator_id", sa.Integer(), sa.ForeignKey("ais_annotators.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ais_sessions")
