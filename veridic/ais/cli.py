"""``veridic ais``: init | import | serve | export | report | annotator | auto.

A thin shell over :mod:`veridic.ais`; the main CLI mounts it as ``veridic ais``.
The database is a SQLAlchemy URL or a file path (``--db``, default
``ais.sqlite`` in the current folder, or ``$VERIDIC_AIS_DB``)::

    veridic ais init --db ais.sqlite
    veridic ais import items.jsonl --project demo --db ais.sqlite
    veridic ais annotator add alice --db ais.sqlite          # prompts for the password (twice)
    echo "$PW" | veridic ais annotator add bob --db ais.sqlite --password-stdin
    veridic ais serve --db ais.sqlite                        # http://127.0.0.1:8100 (veridic serve uses 8000)
    veridic ais report --ratings ../shared/data/ais/ann_cnn_dm.csv --json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from veridic.errors import VeridicError

__all__ = ["app"]

app = typer.Typer(help="AIS human evaluation (paper 003): annotation app, agreement statistics, AutoAIS.", no_args_is_help=True)
annotator_app = typer.Typer(help="Manage annotators.", no_args_is_help=True)
app.add_typer(annotator_app, name="annotator")

DbOpt = Annotated[str | None, typer.Option("--db", help="SQLAlchemy URL or SQLite file (default: $VERIDIC_AIS_DB or ais.sqlite).")]


def _fail(exc: Exception) -> None:
    sys.stderr.write(f"error: {exc}\n")
    raise typer.Exit(code=2)


def _db(db: str | None) -> str:
    return db or os.environ.get("VERIDIC_AIS_DB") or "ais.sqlite"


@app.command("report")
def report_cmd(
    ratings: Annotated[Path | None, typer.Option("--ratings", help="Released AIS ratings (ann_*.csv).")] = None,
    db: DbOpt = None,
    project: Annotated[str | None, typer.Option("--project", help="Project in --db to report on.")] = None,
    sampled: Annotated[int | None, typer.Option("--sampled", help="Items drawn per system; missing ones count as not interpretable (QReCC release: 200).")] = None,
    n_resamples: Annotated[int, typer.Option("--n-resamples", help="Permutations per significance test.")] = 10_000,
    seed: int = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Int / AIS / Flag per system, agreement (F1, PA, alpha, kappa), significance; vs the paper for released ratings."""
    from veridic.ais._released import read_released, released_dataset_name
    from veridic.ais._report import build_report, format_report

    try:
        if (ratings is None) == (project is None):
            raise VeridicError("Give either --ratings FILE (released ann_*.csv) or --project NAME (with --db).")
        if ratings is not None:
            rows = read_released(ratings)
            rep = build_report([r.votes for r in rows], dataset=released_dataset_name(ratings), pair_key={r.votes.item: r.example for r in rows},
                               sampled=sampled, n_resamples=n_resamples, seed=seed, source=str(ratings))
        else:
            from veridic.ais._store import Store

            store = Store(_db(db))
            rep = store.report(project=project, sampled=sampled, n_resamples=n_resamples, seed=seed)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(json.dumps(rep, indent=2) if as_json else format_report(rep))


@app.command("init")
def init_cmd(db: DbOpt = None) -> None:
    """Create or upgrade the database (alembic upgrade head)."""
    from veridic.ais._store import upgrade

    try:
        rev = upgrade(_db(db))
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"database {_db(db)} at revision {rev}")


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="Items (.jsonl/.csv) or released ratings (ann_*.csv with --released).")],
    project: Annotated[str, typer.Option("--project", help="Project name (created if new).")],
    db: DbOpt = None,
    task: Annotated[str, typer.Option("--task", help="Task template: qa (conversational QA), summarization or table.")] = "summarization",
    k: Annotated[int, typer.Option("--k", help="Annotators per item.")] = 5,
    released: Annotated[bool, typer.Option("--released", help="Import released AIS ratings: items plus their consensus and vote counts.")] = False,
) -> None:
    """Import items (JSONL/CSV: claim, source or table, context, system, id) into a project.

    The old field name 'output' is still read in place of 'claim', with a note on stderr.
    """
    import warnings

    from veridic.ais._store import DeprecatedFieldWarning, Store

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecatedFieldWarning)
            store = Store(_db(db))
            n = store.import_released(path, project=project, task=task) if released else store.import_items(path, project=project, task=task, k=k)
    except VeridicError as exc:
        _fail(exc)
    for w in caught:
        if issubclass(w.category, DeprecatedFieldWarning):
            sys.stderr.write(f"DeprecationWarning: {w.message}\n")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    typer.echo(f"imported {n} items into project {project!r}")


@app.command("export")
def export_cmd(
    project: Annotated[str, typer.Option("--project")],
    out: Annotated[Path, typer.Option("--output", "-o", "--out", help="Output file (.jsonl or .csv).")],
    what: Annotated[str, typer.Option("--what", help="'judgments' or 'consensus'.")] = "judgments",
    db: DbOpt = None,
) -> None:
    """Export judgments or per-item consensus to CSV/JSONL."""
    from veridic.ais._store import Store

    try:
        n = Store(_db(db)).export(project=project, path=out, what=what)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"wrote {n} rows to {out}")


@annotator_app.command("add")
def annotator_add(
    name: str,
    db: DbOpt = None,
    admin: Annotated[bool, typer.Option("--admin", help="Give admin rights (create annotators, see progress).")] = False,
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin instead of prompting.")] = False,
) -> None:
    """Create an annotator (the password is stored hashed)."""
    from veridic.ais._store import Store

    password = sys.stdin.readline().rstrip("\n") if password_stdin else typer.prompt("password", hide_input=True, confirmation_prompt=True)
    try:
        Store(_db(db)).add_annotator(name, password=password, admin=admin)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"annotator {name!r} created" + (" (admin)" if admin else ""))


@annotator_app.command("passwd")
def annotator_passwd(
    name: str,
    db: DbOpt = None,
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the new password from stdin instead of prompting.")] = False,
) -> None:
    """Set an annotator's password; every session they have open ends."""
    from veridic.ais._store import Store

    password = sys.stdin.readline().rstrip("\n") if password_stdin else typer.prompt("new password", hide_input=True, confirmation_prompt=True)
    try:
        Store(_db(db)).set_password(name, password=password)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"password of {name!r} changed; their sessions were ended")


@annotator_app.command("logout")
def annotator_logout(name: str, db: DbOpt = None) -> None:
    """End every session of an annotator (a lost laptop, a shared computer)."""
    from veridic.ais._store import Store

    try:
        store = Store(_db(db))
        uid = next((a["id"] for a in store.annotators() if a["name"] == name), None)
        if uid is None:
            raise VeridicError(f"No annotator {name!r}.")
        n = store.end_sessions(uid)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(f"ended {n} session(s) of {name!r}")


DEFAULT_PORT = 8100  # not 8000, which `veridic serve` takes by default: both can run on one machine


@app.command("serve")
def serve_cmd(
    db: DbOpt = None,
    host: str = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (default 8100; `veridic serve` uses 8000).")] = DEFAULT_PORT,
    secure_cookies: Annotated[bool, typer.Option("--secure-cookies", help="Mark the session cookie Secure (browsers send it over HTTPS only); use behind TLS.")] = False,
    session_hours: Annotated[float, typer.Option("--session-hours", help="A login expires after this many hours.")] = 12.0,
    trusted_origin: Annotated[list[str] | None, typer.Option("--trusted-origin", help="Another origin allowed to POST (e.g. a reverse proxy's https://ais.example.org); repeatable.")] = None,
    secret: Annotated[str | None, typer.Option("--secret", hidden=True, help="Ignored: sessions are stored in the database, so no signing key is needed.")] = None,
    forwarded_allow_ips: Annotated[str, typer.Option("--forwarded-allow-ips",
                                                     help="Comma-separated addresses of reverse proxies whose X-Forwarded-For names the client "
                                                          "(the login throttle counts per client address). Default: none, so the header is ignored; '*' trusts anyone.")] = "",
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="Request body size limit (413 past it, before the body is read).")] = 1 << 20,
    header_timeout: Annotated[float, typer.Option("--header-timeout", help="Close connections whose request line and headers take longer than this (slow clients).")] = 10.0,
    body_timeout: Annotated[float, typer.Option("--body-timeout", help="Answer 408 and close when a request body takes longer than this.")] = 20.0,
    max_connections: Annotated[int, typer.Option("--max-connections", help="Concurrent connections and requests served; 503 past it.")] = 200,
) -> None:
    """Run the annotation web app (uvicorn); prints the URL to open."""
    try:
        import uvicorn  # noqa: F401 - checked here so a missing extra gets the install hint
    except ImportError:
        _fail(VeridicError("veridic ais serve needs uvicorn: pip install 'veridic[ais]'"))
    from veridic.ais._web import bound_malloc, create_app
    from veridic.serving import serve_app

    try:
        if max_connections < 1 or header_timeout <= 0:
            raise VeridicError(f"--max-connections must be >= 1 and --header-timeout > 0; got {max_connections} and {header_timeout}.")
        web = create_app(db=_db(db), secure_cookies=secure_cookies, session_hours=session_hours, trusted_origins=tuple(trusted_origin or ()),
                         max_body_bytes=max_body_bytes, body_timeout_s=body_timeout)
    except VeridicError as exc:
        _fail(exc)
    shown = f"[{host}]" if ":" in host else ("127.0.0.1" if host == "0.0.0.0" else host)
    typer.echo(f"AIS annotation app for {_db(db)}: http://{shown}:{port}/login  (Ctrl+C stops it)"
               + ("  [cookies marked Secure: open it through your HTTPS proxy]" if secure_cookies else ""), err=True)
    sys.stderr.flush()
    bound_malloc()  # scrypt's 16 MiB buffers go back to the system after a login flood
    proxies = [p.strip() for p in forwarded_allow_ips.split(",") if p.strip()]
    # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default: off unless proxies are named
    serve_app(web, host=host, port=port, header_timeout_s=header_timeout, log_level="warning", proxy_headers=bool(proxies),
              forwarded_allow_ips=proxies or None, limit_concurrency=max_connections)


@app.command("auto")
def auto_cmd(
    project: Annotated[str, typer.Option("--project")],
    db: DbOpt = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Score above which AutoAIS says attributable (default: the scorer's).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="NLI model (default: the embedded one).")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """AutoAIS: veridic's NLI scorer as a stage-2 rater; agreement with the human consensus."""
    from veridic.ais._auto import AutoAIS
    from veridic.ais._store import Store
    from veridic.nli import load_backend

    try:
        store = Store(_db(db))
        rater = AutoAIS(backend=load_backend(model), threshold=threshold)
        rep = store.auto_report(project=project, rater=rater)
    except VeridicError as exc:
        _fail(exc)
    typer.echo(json.dumps(rep, indent=2) if as_json else json.dumps(rep["agreement"], indent=2))


if __name__ == "__main__":  # pragma: no cover
    app()
