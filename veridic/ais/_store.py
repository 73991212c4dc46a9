"""Storage of an AIS study: SQLite by default (WAL, synchronous FULL), PostgreSQL by URL.

Every write is one short transaction, committed before the web app answers,
so a judgment the client saw acknowledged survives a server kill.

The queue hands an item to at most ``k`` annotators and never twice to the
same one: the per-item count is checked inside the transaction that inserts
the assignment, with the item row locked (``SELECT ... FOR UPDATE`` on
PostgreSQL; SQLite serialises writers), and a unique constraint on
(item, annotator) backs it up.

>>> s = Store("sqlite://", init=True)
>>> s.create_project("demo", task="summarization", k=2)
1
>>> s.add_items("demo", [{"id": "a", "claim": "Cats purr.", "source": "Cats purr when content."}])
1
>>> alice = s.add_annotator("alice", password="pw-alice")
>>> s.next_assignment(alice, project="demo").ext_id
'a'
"""

from __future__ import annotations

import base64
import csv
import functools
import hashlib
import hmac
import json
import secrets
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veridic.ais._models import TASKS, Annotator, Assignment, Item, JudgmentRow, LoginSession, Project, utcnow
from veridic.ais._stats import ItemVotes, Judgment, votes_from_judgments
from veridic.errors import ConfigError, DataFormatError, InputError, MissingDependencyError

try:
    from sqlalchemy import create_engine, delete, event, func, inspect, select
    from sqlalchemy.exc import IntegrityError
    from sqlalchemy.orm import Session, sessionmaker
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("sqlalchemy", extra="ais", purpose="The AIS store") from None

__all__ = ["HEAD_REVISION", "DeprecatedFieldWarning", "ItemView", "StageError", "Store", "database_url", "hash_password", "upgrade", "verify_password"]

HEAD_REVISION = "0002_sessions"
FLAG_REASONS = ("rendering problem (missing or empty element)", "corrupted text or encoding", "underspecified source", "needs expert knowledge", "other")


class StageError(InputError):
    """A judgment arrived out of order (stage 2 before stage 1, a second answer, an unassigned item)."""


class DeprecatedFieldWarning(DeprecationWarning):
    """An imported item names a field by its old name (``output`` for ``claim``); ``veridic ais import`` prints it."""


def _item_claim(rec: Mapping[str, Any], *, path: str, row: int) -> tuple[Any, bool]:
    """The item's generated text and whether it came from the old field name ``output``."""
    claim, old = rec.get("claim"), rec.get("output")
    if old in (None, ""):
        return claim, False
    if claim not in (None, "") and claim != old:
        def clip(v: Any) -> str:
            return repr(v[:57] + "..." if isinstance(v, str) and len(v) > 60 else v)

        raise DataFormatError(f"the item has both 'claim' ({clip(claim)}) and 'output' ({clip(old)}) with different texts; 'output' is the old "
                              "name of 'claim': keep only 'claim'.", path=path, row=row)
    return old, True


@dataclass(frozen=True, slots=True)
class ItemView:
    """What the app may show an annotator: stage-1 fields only unless ``source`` was asked for."""

    id: int
    ext_id: str
    project: str
    task: str
    system: str
    output: str
    context: list[str]
    source: str | None = None
    source_table: dict[str, Any] | None = None


def database_url(db: str | Path) -> str:
    """A SQLAlchemy URL from a URL or a file path (``ais.sqlite`` -> ``sqlite:///ais.sqlite``)."""
    s = str(db)
    if "://" in s:
        if s.startswith("postgresql://"):
            return "postgresql+psycopg://" + s[len("postgresql://"):]
        return s
    return f"sqlite:///{Path(s).expanduser()}"


def hash_password(password: str) -> str:
    """scrypt (stdlib) with a random salt: ``scrypt$n$r$p$salt$hash``."""
    if not password:
        raise InputError("A password must not be empty.")
    salt = secrets.token_bytes(16)
    n, r, p = 2**14, 8, 1
    h = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=32)
    return f"scrypt${n}${r}${p}${base64.b64encode(salt).decode()}${base64.b64encode(h).decode()}"


MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024  # a login form's password is hashed whole: no megabyte passwords
_ASSIGN_PASSES = 200


def check_password_strength(password: str) -> None:
    """Refuse a password a guesser would find at once: under 8 characters, or one character repeated."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD_CHARS:
        got = len(password) if isinstance(password, str) else type(password).__name__
        raise InputError(f"A password needs at least {MIN_PASSWORD_CHARS} characters; got {got}. Choose a longer one (a passphrase works well).")
    if len(password) > MAX_PASSWORD_CHARS:
        raise InputError(f"A password may have at most {MAX_PASSWORD_CHARS} characters; got {len(password)}.")
    if len(set(password)) < 3:
        raise InputError("A password of one or two repeated characters is guessed at once; choose another.")


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, h = stored.split("$")
    except ValueError:
        return False
    if kind != "scrypt":
        return False
    got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=32)
    return hmac.compare_digest(got, base64.b64decode(h))


def _engine(url: str):
    kw: dict[str, Any] = {}
    if url.startswith("sqlite"):
        kw["connect_args"] = {"check_same_thread": False, "timeout": 30}
        if url in ("sqlite://", "sqlite:///:memory:"):
            from sqlalchemy.pool import StaticPool

            kw["poolclass"] = StaticPool
    else:
        kw["pool_pre_ping"] = True
        kw["pool_size"] = 10
        kw["max_overflow"] = 20
    try:
        engine = create_engine(url, **kw)
    except ImportError as exc:  # a driver missing, e.g. psycopg
        raise MissingDependencyError(exc.name or "database driver", extra="ais", purpose=f"The database URL {url.split('@')[-1]!r}") from None
    if url.startswith("sqlite"):

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):  # WAL: readers never block the writer; FULL: a commit is on disk
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn):  # take the write lock up front so check-then-insert cannot interleave
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        # let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's implicit transactions are off)
        @event.listens_for(engine, "connect")
        def _autocommit(dbapi_conn, _record):
            dbapi_conn.isolation_level = None

    return engine


def _alembic_config(url: str):
    try:
        from alembic.config import Config
    except ImportError:  # pragma: no cover
        raise MissingDependencyError("alembic", extra="ais", purpose="AIS database migrations") from None
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(db: str | Path, *, engine=None) -> str:
    """Create or upgrade the schema to the newest alembic revision; returns it."""
    from alembic import command

    url = database_url(db)
    cfg = _alembic_config(url)
    eng = engine or _engine(url)
    with eng.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    if engine is None:
        eng.dispose()
    return HEAD_REVISION


class Store:
    """An AIS study database. ``init=True`` runs the migrations first (``veridic ais init`` does the same)."""

    def __init__(self, db: str | Path, *, init: bool = False):
        self.url = database_url(db)
        self.engine = _engine(self.url)
        if init:
            upgrade(self.url, engine=self.engine)
        elif not inspect(self.engine).has_table("ais_projects"):
            raise ConfigError(f"{db!s} has no AIS tables yet; run `veridic ais init --db {db}` first.")
        self.Session = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    # --- projects and items -------------------------------------------------
    def create_project(self, name: str, *, task: str, k: int = 5) -> int:
        if task not in TASKS:
            raise ConfigError(f"Unknown task {task!r}; expected one of {TASKS} (conversational QA, summarization, table-to-text).")
        if k < 1:
            raise ConfigError(f"k (annotators per item) must be >= 1; got {k}.")
        with self.Session.begin() as s:
            p = s.scalar(select(Project).where(Project.name == name))
            if p is not None:
                if p.task != task:
                    raise ConfigError(f"Project {name!r} exists with task {p.task!r}, not {task!r}.")
                return p.id
            p = Project(name=name, task=task, k=k)
            s.add(p)
            s.flush()
            return p.id

    def _project(self, s: Session, name: str) -> Project:
        p = s.scalar(select(Project).where(Project.name == name))
        if p is None:
            names = list(s.scalars(select(Project.name)))
            raise InputError(f"No project {name!r}; existing projects: {names}.")
        return p

    def projects(self) -> list[dict[str, Any]]:
        with self.Session() as s:
            return [{"name": p.name, "task": p.task, "k": p.k} for p in s.scalars(select(Project).order_by(Project.id))]

    def add_items(self, project: str, records: Iterable[Mapping[str, Any]], *, source_name: str = "<records>") -> int:
        """Add items: ``claim`` (required), ``id``, ``system``, ``source`` or ``table``, ``context`` (list or JSON list).

        ``output``, the old name of ``claim``, is still read, with a :class:`DeprecatedFieldWarning`; an item with both
        fields and different texts is a :class:`~veridic.errors.DataFormatError`.
        """
        n = n_old = 0
        with self.Session.begin() as s:
            p = self._project(s, project)
            existing = set(s.scalars(select(Item.ext_id).where(Item.project_id == p.id)))
            seen: dict[str, int] = {}
            for i, rec in enumerate(records, start=1):
                claim, old_name = _item_claim(rec, path=source_name, row=i)
                if not isinstance(claim, str) or not claim.strip():
                    raise DataFormatError(f"'claim' must be a non-empty string; got {claim!r}. Item fields: id, claim, source or table, context, system.",
                                          path=source_name, row=i)
                n_old += old_name
                context = _as_json(rec.get("context"), what="context", path=source_name, row=i) or []
                if isinstance(context, str):
                    context = [context]
                table = _as_json(rec.get("table"), what="table", path=source_name, row=i)
                if table is not None:
                    _check_table(table, path=source_name, row=i)
                source = rec.get("source")
                if p.task == "table" and table is None and not source:
                    raise DataFormatError("a table-to-text item needs 'table' ({\"header\": [...], \"rows\": [[...]]}) or 'source'.", path=source_name, row=i)
                ext_id = str(rec.get("id") or f"{source_name}:{i}")
                if ext_id in existing:
                    raise DataFormatError(f"item id {ext_id!r} is already in project {project!r} ({len(existing)} items there); nothing was imported. "
                                          "These items were imported before: give new items new ids, or import into a new --project.", path=source_name, row=i)
                if ext_id in seen:
                    raise DataFormatError(f"item id {ext_id!r} appears twice in the file (rows {seen[ext_id]} and {i}); ids must be unique. Nothing was imported.",
                                          path=source_name, row=i)
                seen[ext_id] = i
                s.add(Item(project_id=p.id, ext_id=ext_id, system=str(rec.get("system") or ""), task=p.task,
                           output=claim, context=[str(c) for c in context], source=None if source in (None, "") else str(source),
                           source_table=table, meta=dict(rec["meta"]) if isinstance(rec.get("meta"), Mapping) else None))
                n += 1
        if n_old:
            warnings.warn(f"{source_name}: {n_old} of {n} items name the generated text 'output', which is deprecated; name the field 'claim'.",
                          DeprecatedFieldWarning, stacklevel=2)
        return n

    def import_items(self, path: str | Path, *, project: str, task: str, k: int = 5) -> int:
        from veridic.io._records import read_records

        self.create_project(project, task=task, k=k)
        return self.add_items(project, read_records(path), source_name=str(path))

    def import_released(self, path: str | Path, *, project: str, task: str) -> int:
        """Released ratings (``ann_*.csv``) as items whose votes are already known (no source text)."""
        from veridic.ais._released import read_released

        rows = read_released(path)
        self.create_project(project, task=task, k=5)
        recs = [{"id": r.votes.item, "system": r.system, "claim": r.output, "source": r.doc_url or "",
                 "table": {"header": [], "rows": []} if task == "table" else None,
                 "meta": {"example": r.example, "released_votes": {k: getattr(r.votes, k) for k in ItemVotes.__slots__}}} for r in rows]
        return self.add_items(project, recs, source_name=str(path))

    # --- annotators ----------------------------------------------------------
    def add_annotator(self, name: str, *, password: str, admin: bool = False, expert: bool = False) -> int:
        if not name or len(name) > 100:
            raise InputError(f"An annotator name must have 1-100 characters; got {name!r}.")
        check_password_strength(password)
        with self.Session.begin() as s:
            if s.scalar(select(Annotator.id).where(Annotator.name == name)) is not None:
                raise InputError(f"Annotator {name!r} already exists.")
            a = Annotator(name=name, password_hash=hash_password(password), is_admin=admin, is_expert=expert)
            s.add(a)
            s.flush()
            return a.id

    def authenticate(self, name: str, password: str) -> int | None:
        with self.Session() as s:
            row = s.execute(select(Annotator.id, Annotator.password_hash).where(Annotator.name == name)).first()
        # scrypt runs after the transaction ends: on SQLite every transaction holds the write lock (BEGIN
        # IMMEDIATE), and a login storm must not stall every judgment behind 16 MiB hashes
        if row is None:
            verify_password(password, _equaliser())  # same cost for unknown names
            return None
        return row.id if verify_password(password, row.password_hash) else None

    def set_password(self, name: str, *, password: str) -> int:
        """Change ``name``'s password and end all of their sessions (a stolen cookie dies with the old password)."""
        with self.Session.begin() as s:
            a = s.scalar(select(Annotator).where(Annotator.name == name))
            if a is None:
                raise InputError(f"No annotator {name!r}; create one with `veridic ais annotator add {name}`.")
            check_password_strength(password)
            a.password_hash = hash_password(password)
            s.execute(delete(LoginSession).where(LoginSession.annotator_id == a.id))
            return a.id

    # --- sessions (server-side, so logout and password changes revoke them) ---------
    def create_session(self, annotator_id: int, *, ttl_s: float = 12 * 3600) -> str:
        """A new login for ``annotator_id``; returns the token for the cookie (only its sha256 is stored)."""
        import datetime as _dt

        token = secrets.token_urlsafe(32)
        now = utcnow()
        with self.Session.begin() as s:
            # expired rows are cleared on the way, so the table holds only live sessions
            s.execute(delete(LoginSession).where(LoginSession.expires_at < now))
            s.add(LoginSession(token_hash=_token_hash(token), annotator_id=annotator_id, created_at=now, expires_at=now + _dt.timedelta(seconds=ttl_s)))
        return token

    def session_user(self, token: str | None) -> dict[str, Any] | None:
        """The annotator a live session token belongs to, or None (unknown, revoked or expired)."""
        if not token or len(token) > 200:
            return None
        with self.Session() as s:
            row = s.get(LoginSession, _token_hash(token))
            if row is None or _aware(row.expires_at) <= utcnow():
                return None
            a = s.get(Annotator, row.annotator_id)
            return None if a is None else {"id": a.id, "name": a.name, "admin": a.is_admin, "expert": a.is_expert}

    def end_session(self, token: str | None) -> None:
        if token:
            with self.Session.begin() as s:
                s.execute(delete(LoginSession).where(LoginSession.token_hash == _token_hash(token)))

    def end_sessions(self, annotator_id: int) -> int:
        """Log ``annotator_id`` out everywhere; returns how many sessions ended."""
        with self.Session.begin() as s:
            return s.execute(delete(LoginSession).where(LoginSession.annotator_id == annotator_id)).rowcount or 0

    def has_sessions_table(self) -> bool:
        return inspect(self.engine).has_table("ais_sessions")

    def annotator(self, annotator_id: int) -> dict[str, Any] | None:
        with self.Session() as s:
            a = s.get(Annotator, annotator_id)
            return None if a is None else {"id": a.id, "name": a.name, "admin": a.is_admin, "expert": a.is_expert}

    def annotators(self) -> list[dict[str, Any]]:
        with self.Session() as s:
            return [{"id": a.id, "name": a.name, "admin": a.is_admin, "expert": a.is_expert} for a in s.scalars(select(Annotator).order_by(Annotator.id))]

    # --- queue ---------------------------------------------------------------
    def next_assignment(self, annotator_id: int, *, project: str | None = None) -> ItemView | None:
        """The annotator's open assignment, else a new one on an item with fewer than k assignments."""
        with self.Session.begin() as s:
            open_item = s.scalar(
                select(Item).join(Assignment, Assignment.item_id == Item.id).join(Project, Project.id == Item.project_id)
                .where(Assignment.annotator_id == annotator_id, Assignment.completed_at.is_(None))
                .where(*(() if project is None else (Project.name == project,))).order_by(Assignment.id).limit(1)
            )
            if open_item is not None:
                return self._view(s, open_item)
            mine = select(Assignment.item_id).where(Assignment.annotator_id == annotator_id)
            counts = select(Assignment.item_id, func.count().label("n")).group_by(Assignment.item_id).subquery()
            full: set[int] = set()
            # "Done" only when a fresh query finds no open item at all. Each pass looks at the 20 fullest
            # candidates (finish items first); on PostgreSQL every statement sees the latest commits, so
            # items that others filled meanwhile drop out of the next pass instead of ending the search.
            # SKIP LOCKED passes over an item another annotator is being assigned right now (SQLite's
            # BEGIN IMMEDIATE already serialises this transaction, and ignores the clause).
            for attempt in range(_ASSIGN_PASSES):
                q = (select(Item.id).join(Project, Project.id == Item.project_id).outerjoin(counts, counts.c.item_id == Item.id)
                     .where(Item.id.not_in(mine), func.coalesce(counts.c.n, 0) < Project.k)
                     .where(*(() if project is None else (Project.name == project,)))
                     .where(*(() if not full else (Item.id.not_in(full),)))
                     .order_by(func.coalesce(counts.c.n, 0).desc(), Item.id).limit(20))
                ids = list(s.scalars(q))
                if not ids:
                    return None
                last = attempt == _ASSIGN_PASSES - 1
                for item_id in ids:
                    lock = select(Item).where(Item.id == item_id).with_for_update(skip_locked=not last)
                    item = s.scalar(lock)
                    if item is None:
                        continue  # being assigned by someone else this instant: still a candidate next pass
                    k = s.scalar(select(Project.k).where(Project.id == item.project_id))
                    n = s.scalar(select(func.count()).select_from(Assignment).where(Assignment.item_id == item_id))
                    if n >= k:
                        full.add(item_id)
                        continue
                    s.add(Assignment(item_id=item_id, annotator_id=annotator_id))
                    s.flush()
                    return self._view(s, item)
                if attempt:
                    time.sleep(min(0.05, 0.002 * attempt))  # every candidate was locked by others: let them commit
            return None

    def _view(self, s: Session, item: Item, *, with_source: bool = False) -> ItemView:
        pname = s.scalar(select(Project.name).where(Project.id == item.project_id))
        return ItemView(id=item.id, ext_id=item.ext_id, project=pname, task=item.task, system=item.system, output=item.output,
                        context=list(item.context or []), source=item.source if with_source else None,
                        source_table=item.source_table if with_source else None)

    def _assignment(self, s: Session, item_id: int, annotator_id: int, *, lock: bool = False) -> Assignment:
        q = select(Assignment).where(Assignment.item_id == item_id, Assignment.annotator_id == annotator_id)
        a = s.scalar(q.with_for_update() if lock else q)
        if a is None:
            raise StageError(f"Item {item_id} is not assigned to you; take items from the queue (/next).")
        return a

    def item_for(self, item_id: int, annotator_id: int, *, stage: int) -> ItemView:
        """The item as annotator sees it at ``stage`` (1: no source; 2: source, only after a stored stage-1 yes)."""
        with self.Session() as s:
            self._assignment(s, item_id, annotator_id)
            item = s.get(Item, item_id)
            if stage == 2:
                self._require_interpretable(s, item_id, annotator_id)
            return self._view(s, item, with_source=stage == 2)

    def _require_interpretable(self, s: Session, item_id: int, annotator_id: int) -> None:
        j = s.scalar(select(JudgmentRow).where(JudgmentRow.item_id == item_id, JudgmentRow.annotator_id == annotator_id, JudgmentRow.stage == "int"))
        if j is None:
            raise StageError("Stage 2 opens only after your stage-1 answer is stored; answer stage 1 first.")
        if not j.answer:
            raise StageError("You judged this output not interpretable, so there is no stage 2 for it.")

    def stage_of(self, item_id: int, annotator_id: int) -> dict[str, Any]:
        with self.Session() as s:
            rows = s.scalars(select(JudgmentRow).where(JudgmentRow.item_id == item_id, JudgmentRow.annotator_id == annotator_id)).all()
            return {r.stage: r.answer for r in rows}

    def record(self, *, item_id: int, annotator_id: int, stage: str, answer: bool | None = None,
               flag_reason: str | None = None, justification: str | None = None) -> int:
        """Store one judgment in its own transaction; returns its id. Raises :class:`StageError` when out of order."""
        if stage not in ("int", "ais", "flag"):
            raise StageError(f"stage must be 'int', 'ais' or 'flag'; got {stage!r}.")
        if stage != "flag" and answer is None:
            raise StageError(f"A stage {stage!r} judgment needs an answer (yes/no).")
        if stage == "flag" and not flag_reason:
            raise StageError(f"A flag needs a reason, e.g. one of {FLAG_REASONS}.")
        with self.Session.begin() as s:
            a = self._assignment(s, item_id, annotator_id, lock=True)
            if a.completed_at is not None:
                raise StageError(f"Item {item_id} is already complete for you; judgments cannot be changed.")
            if stage == "ais":
                self._require_interpretable(s, item_id, annotator_id)
            j = JudgmentRow(item_id=item_id, annotator_id=annotator_id, stage=stage, answer=answer if stage != "flag" else None,
                            flag_reason=(flag_reason or None) if stage == "flag" else None, justification=(justification or "").strip() or None)
            s.add(j)
            try:
                s.flush()
            except IntegrityError:
                raise StageError(f"You already answered stage {stage!r} of item {item_id}.") from None
            if stage == "flag" or stage == "ais" or (stage == "int" and not answer):
                a.completed_at = utcnow()
            return j.id

    # --- reading judgments -------------------------------------------------------
    def judgments(self, *, project: str | None = None, annotator_id: int | None = None) -> list[dict[str, Any]]:
        """Judgment rows (all, or only ``annotator_id``'s); the web app passes the caller's id for non-admins."""
        with self.Session() as s:
            q = (select(JudgmentRow, Item, Annotator.name, Project.name).join(Item, Item.id == JudgmentRow.item_id)
                 .join(Annotator, Annotator.id == JudgmentRow.annotator_id).join(Project, Project.id == Item.project_id).order_by(JudgmentRow.id))
            if project is not None:
                q = q.where(Project.name == project)
            if annotator_id is not None:
                q = q.where(JudgmentRow.annotator_id == annotator_id)
            return [{"id": j.id, "project": pn, "item": it.ext_id, "item_id": it.id, "system": it.system, "annotator": an, "stage": j.stage,
                     "answer": j.answer, "flag_reason": j.flag_reason, "justification": j.justification, "created_at": j.created_at.isoformat()}
                    for j, it, an, pn in s.execute(q)]

    def count_judgments(self) -> int:
        with self.Session() as s:
            return s.scalar(select(func.count()).select_from(JudgmentRow)) or 0

    def votes(self, *, project: str, experts: bool = False) -> list[ItemVotes]:
        """Vote counts per item: released votes where imported, else from crowd (or expert) judgments."""
        with self.Session() as s:
            p = self._project(s, project)
            items = list(s.scalars(select(Item).where(Item.project_id == p.id).order_by(Item.id)))
            rows = s.execute(select(JudgmentRow, Annotator.is_expert).join(Annotator, Annotator.id == JudgmentRow.annotator_id)
                             .join(Item, Item.id == JudgmentRow.item_id).where(Item.project_id == p.id)).all()
        per: dict[tuple[int, int], dict[str, Any]] = {}
        for j, is_expert in rows:
            if bool(is_expert) != experts:
                continue
            per.setdefault((j.item_id, j.annotator_id), {})[j.stage] = j.answer if j.stage != "flag" else True
        by_id = {it.id: it for it in items}
        judg = [Judgment(item=by_id[i].ext_id, rater=str(a), system=by_id[i].system, interpretable=d.get("int"), attributable=d.get("ais"),
                         flagged=bool(d.get("flag"))) for (i, a), d in per.items()]
        counted = {v.item: v for v in votes_from_judgments(judg)}
        out = []
        for it in items:
            rel = (it.meta or {}).get("released_votes")
            if rel and not experts:
                out.append(ItemVotes(**rel))
            elif it.ext_id in counted:
                out.append(counted[it.ext_id])
        return out

    def progress(self, *, project: str) -> dict[str, Any]:
        with self.Session() as s:
            p = self._project(s, project)
            n_items = s.scalar(select(func.count()).select_from(Item).where(Item.project_id == p.id)) or 0
            done = s.scalar(select(func.count()).select_from(Assignment).join(Item, Item.id == Assignment.item_id)
                            .where(Item.project_id == p.id, Assignment.completed_at.is_not(None))) or 0
            opened = s.scalar(select(func.count()).select_from(Assignment).join(Item, Item.id == Assignment.item_id).where(Item.project_id == p.id)) or 0
        return {"project": project, "task": p.task, "k": p.k, "items": n_items, "assignments_needed": n_items * p.k,
                "assignments_open": opened - done, "assignments_done": done}

    def report(self, *, project: str, sampled: int | None = None, n_resamples: int = 10_000, seed: int = 0) -> dict[str, Any]:
        """:func:`~veridic.ais._report.build_report` over the project's judgments (plus agreement with experts, if any)."""
        from veridic.ais._report import build_report
        from veridic.ais._stats import consensus, expert_agreement

        votes = self.votes(project=project)
        extra: dict[str, Any] = {"progress": self.progress(project=project)}
        expert_votes = self.votes(project=project, experts=True)
        if expert_votes:
            ec = {c.item: c for c in consensus(expert_votes)}
            crowd = self._crowd_judgments(project)
            extra["vs_expert"] = {
                "int": expert_agreement(crowd, expert={i: c.interpretable for i, c in ec.items() if not c.flagged}, stage="int").to_dict(),
                "ais": expert_agreement(crowd, expert={i: c.attributable for i, c in ec.items() if c.interpretable}, stage="ais").to_dict(),
            }
        with self.Session() as s:
            items = s.execute(select(Item.ext_id, Item.meta).join(Project, Project.id == Item.project_id).where(Project.name == project)).all()
        pair_key = {e: str((m or {}).get("example")) for e, m in items if (m or {}).get("example") is not None}
        return build_report(votes, pair_key=pair_key or None, sampled=sampled, n_resamples=n_resamples, seed=seed, source=f"project {project}", extra=extra)

    def _crowd_judgments(self, project: str) -> list[Judgment]:
        per: dict[tuple[str, str], dict[str, Any]] = {}
        systems = {}
        with self.Session() as s:
            rows = s.execute(select(JudgmentRow, Item.ext_id, Item.system, Annotator.is_expert).join(Item, Item.id == JudgmentRow.item_id)
                             .join(Project, Project.id == Item.project_id).join(Annotator, Annotator.id == JudgmentRow.annotator_id)
                             .where(Project.name == project)).all()
        for j, ext, system, is_expert in rows:
            if is_expert:
                continue
            systems[ext] = system
            per.setdefault((ext, str(j.annotator_id)), {})[j.stage] = j.answer if j.stage != "flag" else True
        return [Judgment(item=i, rater=a, system=systems[i], interpretable=d.get("int"), attributable=d.get("ais"), flagged=bool(d.get("flag")))
                for (i, a), d in per.items()]

    def items_with_sources(self, *, project: str) -> list[dict[str, Any]]:
        with self.Session() as s:
            p = self._project(s, project)
            return [{"id": it.ext_id, "system": it.system, "claim": it.output, "source": it.source, "table": it.source_table, "context": it.context or []}
                    for it in s.scalars(select(Item).where(Item.project_id == p.id).order_by(Item.id))]

    def auto_report(self, *, project: str, rater: Any) -> dict[str, Any]:
        from veridic.ais._auto import auto_agreement

        return auto_agreement(items=self.items_with_sources(project=project), votes=self.votes(project=project), rater=rater)

    # --- export --------------------------------------------------------------
    def export(self, *, project: str, path: str | Path, what: str = "judgments") -> int:
        """Write judgments or per-item consensus to ``.jsonl`` or ``.csv``; returns the row count."""
        from veridic.ais._stats import consensus

        with self.Session() as s:
            self._project(s, project)  # a mistyped project is an error, not an empty export over the last one
        if what == "judgments":
            rows = self.judgments(project=project)
        elif what == "consensus":
            votes = self.votes(project=project)
            rows = [{"item": c.item, "system": c.system, "flagged": c.flagged, "interpretable": c.interpretable, "attributable": c.attributable,
                     "int_tie": c.int_tie, "ais_tie": c.ais_tie, "int_yes": v.int_yes, "int_no": v.int_no, "ais_yes": v.ais_yes, "ais_no": v.ais_no,
                     "flags": v.flags} for c, v in zip(consensus(votes), votes)]
        else:
            raise ConfigError(f"what must be 'judgments' or 'consensus'; got {what!r}.")
        from veridic.io._atomic import atomic_open, check_output_path

        p = Path(path)
        if p.suffix not in (".jsonl", ".csv"):
            raise ConfigError(f"Export format comes from the suffix: .jsonl or .csv; got {p.name!r}.")
        check_output_path(p, what="export")
        with atomic_open(p, "w", encoding="utf-8", newline="" if p.suffix == ".csv" else None) as fh:
            if p.suffix == ".jsonl":
                for r in rows:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            else:
                fields = list(rows[0]) if rows else ["item"]
                w = csv.DictWriter(fh, fieldnames=fields)
                w.writeheader()
                w.writerows({k: csv_safe(v) for k, v in r.items()} for r in rows)
        return len(rows)


@functools.lru_cache(maxsize=1)
def _equaliser() -> str:
    return hash_password("timing-equaliser")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def _aware(t):
    # SQLite hands back naive datetimes even for timezone=True columns; they were written in UTC
    import datetime as _dt

    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.UTC)


from veridic.io._records import csv_safe  # noqa: E402 - one definition for every CSV veridic writes


def _as_json(value: Any, *, what: str, path: str, row: int) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{what!r} looks like JSON but does not parse ({exc.msg}).", path=path, row=row) from None
    if value in ("", None):
        return None
    return value


def _check_table(table: Any, *, path: str, row: int) -> None:
    """A table item in the shape the stage-2 page renders: header (a list), rows (lists of cells), highlighted ([row, col] pairs)."""
    hint = ' Expected {"header": [...], "rows": [[...], ...], "highlighted": [[row, col], ...]} (title, section, description: text).'
    if not isinstance(table, Mapping):
        raise DataFormatError(f"'table' must be an object; got {type(table).__name__}." + hint, path=path, row=row)
    unknown = sorted(set(table) - {"title", "section", "description", "header", "rows", "highlighted"})
    if unknown:
        raise DataFormatError(f"'table' has unknown field(s) {unknown}." + hint, path=path, row=row)
    for key in ("title", "section", "description"):
        if table.get(key) is not None and not isinstance(table[key], (str, int, float)):
            raise DataFormatError(f"'table.{key}' must be text; got {type(table[key]).__name__}." + hint, path=path, row=row)
    scalar = (str, int, float, bool, type(None))
    header = table.get("header")
    if header is not None and (not isinstance(header, list) or not all(isinstance(h, scalar) for h in header)):
        raise DataFormatError("'table.header' must be a list of cells (text or numbers)." + hint, path=path, row=row)
    rows = table.get("rows")
    if rows is not None and (not isinstance(rows, list) or not all(isinstance(r, list) and all(isinstance(c, scalar) for c in r) for r in rows)):
        raise DataFormatError("'table.rows' must be a list of rows, each a list of cells (text or numbers)." + hint, path=path, row=row)
    hl = table.get("highlighted")
    if hl is not None and (not isinstance(hl, list) or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in p)
                                                                for p in hl)):
        raise DataFormatError("'table.highlighted' must be a list of [row, column] index pairs." + hint, path=path, row=row)
