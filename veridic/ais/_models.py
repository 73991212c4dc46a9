"""SQLAlchemy 2 tables of an AIS study: projects, items, annotators, assignments, judgments.

Every change to these tables ships as an alembic revision under
``veridic/ais/migrations/versions`` so an existing study database upgrades
with ``veridic ais init``.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["JUDGMENT_STAGES", "TASKS", "Annotator", "Assignment", "Base", "Item", "JudgmentRow", "LoginSession", "Project", "utcnow"]

TASKS = ("qa", "summarization", "table")
JUDGMENT_STAGES = ("int", "ais", "flag")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    pass


# Columns that several tables declare alike, each declared once (SQLAlchemy takes the column from the annotation).
_Id = Annotated[int, mapped_column(Integer, primary_key=True)]
_Created = Annotated[dt.datetime, mapped_column(DateTime(timezone=True), default=utcnow)]
_ItemRef = Annotated[int, mapped_column(ForeignKey("ais_items.id", ondelete="CASCADE"), index=True)]
_AnnotatorRef = Annotated[int, mapped_column(ForeignKey("ais_annotators.id", ondelete="CASCADE"), index=True)]


class Project(Base):
    __tablename__ = "ais_projects"
    id: Mapped[_Id]
    name: Mapped[str] = mapped_column(String(200), unique=True)
    task: Mapped[str] = mapped_column(String(32))
    k: Mapped[int] = mapped_column(Integer, default=5)
    created_at: Mapped[_Created]


class Item(Base):
    __tablename__ = "ais_items"
    __table_args__ = (UniqueConstraint("project_id", "ext_id", name="uq_item_ext"),)
    id: Mapped[_Id]
    project_id: Mapped[int] = mapped_column(ForeignKey("ais_projects.id", ondelete="CASCADE"), index=True)
    ext_id: Mapped[str] = mapped_column(String(300))
    system: Mapped[str] = mapped_column(String(200), default="")
    task: Mapped[str] = mapped_column(String(32))
    output: Mapped[str] = mapped_column(Text)
    context: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # conversation history, oldest first
    source: Mapped[str | None] = mapped_column(Text, nullable=True)
    source_table: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # {"title", "header", "rows", "highlighted"}
    meta: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # e.g. released votes, example id
    created_at: Mapped[_Created]


class Annotator(Base):
    __tablename__ = "ais_annotators"
    id: Mapped[_Id]
    name: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(300))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    is_expert: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[_Created]


class Assignment(Base):
    __tablename__ = "ais_assignments"
    # never the same item twice to the same annotator, enforced by the database
    __table_args__ = (UniqueConstraint("item_id", "annotator_id", name="uq_assignment"),)
    id: Mapped[_Id]
    item_id: Mapped[_ItemRef]
    annotator_id: Mapped[_AnnotatorRef]
    created_at: Mapped[_Created]
    completed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class JudgmentRow(Base):
    __tablename__ = "ais_judgments"
    __table_args__ = (UniqueConstraint("item_id", "annotator_id", "stage", name="uq_judgment"),)
    id: Mapped[_Id]
    item_id: Mapped[_ItemRef]
    annotator_id: Mapped[_AnnotatorRef]
    stage: Mapped[str] = mapped_column(String(8))  # int | ais | flag
    answer: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    flag_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)
    justification: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[_Created]


class LoginSession(Base):
    """A server-side login: the cookie holds a random token, the table its sha256 (revoked by deleting the row)."""

    __tablename__ = "ais_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    annotator_id: Mapped[_AnnotatorRef]
    created_at: Mapped[_Created]
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
