"""Initial AIS schema: projects, items, annotators, assignments, judgments.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ais_projects",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("task", sa.String(32), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "ais_items",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("project_id", sa.Integer(), sa.ForeignKey("ais_projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("ext_id", sa.String(300), nullable=False),
        sa.Column("system", sa.String(200), nullable=False),
        sa.Column("task", sa.String(32), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("context", sa.JSON(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("source_table", sa.JSON(), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("project_id", "ext_id", name="uq_item_ext"),
    )
    op.create_index("ix_ais_items_project_id", "ais_items", ["project_id"])
    op.create_table(
        "ais_annotators",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(300), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("is_expert", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "ais_assignments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("ais_items.id", ondelete="CASCADE"), nullable=False),
        sa.Column("annotator_id", sa.Integer(), sa.ForeignKey("ais_annotators.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("item_id", "annotator_id", name="uq_assignment"),
    )
    op.create_index("ix_ais_assignments_item_id", "ais_assignments", ["item_id"])
    op.create_index("ix_ais_assignments_annotator_id", "ais_assignments", ["annotator_id"])
    op.create_table(
        "ais_judgments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("ais_items.id", ondelete="CASCADE"), nullable=False),
        sa.Column("annotator_id", sa.Integer(), sa.ForeignKey("ais_annotators.id", ondelete="CASCADE"), nullable=False),
        sa.Column("stage", sa.String(8), nullable=False),
        sa.Column("answer", sa.Boolean(), nullable=True),
        sa.Column("flag_reason", sa.String(200), nullable=True),
        sa.Column("justification", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("item_id", "annotator_id", "stage", name="uq_judgment"),
    )
    op.create_index("ix_ais_judgments_item_id", "ais_judgments", ["item_id"])
    op.create_index("ix_ais_judgments_annotator_id", "ais_judgments", ["annotator_id"])


def downgrade() -> None:
    op.drop_table("ais_judgments")
    op.drop_table("ais_assignments")
    op.drop_table("ais_annotators")
    op.drop_table("ais_items")
    op.drop_table("ais_projects")
