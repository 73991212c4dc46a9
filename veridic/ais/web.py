"""The AIS annotation web app (FastAPI, server-rendered Jinja2, plain forms; no front-end build, no CDN).

Security model: every route except ``GET/POST /login`` needs a signed session
cookie (SameSite=strict, which also stops cross-site form posts); pages
redirect to ``/login`` and ``/api/*`` answer 401 without one. Annotators only
ever read their own judgments; ``/admin`` and ``/api/report`` are admin-only.
The stage-1 page never contains the source; ``/items/{id}/stage2`` answers
409 until this annotator's stage-1 "yes" is stored.

>>> from veridic.ais.store import Store
>>> app = create_app(store=Store("sqlite://", init=True), secret="x" * 32)
>>> sorted(r.path for r in app.routes if getattr(r, "path", "").startswith("/api"))
['/api/judgments', '/api/judgments', '/api/next', '/api/report']
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from veridic.ais.store import FLAG_REASONS, StageError, Store
from veridic.errors import InputError, MissingDependencyError

try:
    from fastapi import Depends, FastAPI, Form, HTTPException, Request
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
    from fastapi.templating import Jinja2Templates
    from pydantic import BaseModel
    from starlette.middleware.sessions import SessionMiddleware
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", extra="ais", purpose="The AIS web app") from None

__all__ = ["PUBLIC_ROUTES", "create_app"]

PUBLIC_ROUTES = frozenset({("GET", "/login"), ("POST", "/login")})
TEMPLATES = Path(__file__).parent / "templates"


class _NeedLogin(Exception):
    def __init__(self, api: bool):
        self.api = api


class JudgmentIn(BaseModel):
    item_id: int
    stage: str
    answer: bool | None = None
    flag_reason: str | None = None
    justification: str | None = None


def _fmt(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def create_app(*, db: str | None = None, store: Store | None = None, secret: str | None = None, n_resamples: int = 2000) -> FastAPI:
    """Build the app over ``store`` (or a :class:`Store` opened on ``db``). ``secret`` signs session cookies."""
    if store is None:
        if db is None:
            raise InputError("create_app needs db= (URL or SQLite path) or store=.")
        store = Store(db)
    app = FastAPI(title="veridic AIS", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(SessionMiddleware, secret_key=secret or secrets.token_hex(32), same_site="strict", https_only=False, max_age=12 * 3600)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.globals["fmt"] = _fmt
    app.state.store = store

    @app.exception_handler(_NeedLogin)
    async def _need_login(request: Request, exc: _NeedLogin):
        if exc.api:
            return JSONResponse({"detail": "login required"}, status_code=401)
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(StageError)
    async def _stage_error(request: Request, exc: StageError):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": str(exc)}, status_code=409)
        return HTMLResponse(templates.get_template("base.html").render(request=request, user=None, error=str(exc)), status_code=409)

    def user(request: Request) -> dict[str, Any]:
        uid = request.session.get("uid")
        u = store.annotator(uid) if isinstance(uid, int) else None
        if u is None:
            raise _NeedLogin(api=request.url.path.startswith("/api/"))
        return u

    def admin(u: dict[str, Any] = Depends(user)) -> dict[str, Any]:
        if not u["admin"]:
            raise HTTPException(status_code=403, detail="admin only")
        return u

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, ctx, status_code=status)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request):
        return page(request, "login.html", user=None)

    @app.post("/login")
    def login(request: Request, name: str = Form(...), password: str = Form(...)):
        uid = store.authenticate(name, password)
        if uid is None:
            return page(request, "login.html", status=401, user=None, error="Wrong name or password.")
        request.session.clear()
        request.session["uid"] = uid
        return RedirectResponse("/", status_code=303)

    @app.post("/logout")
    def logout(request: Request, u: dict = Depends(user)):
        request.session.clear()
        return RedirectResponse("/login", status_code=303)

    @app.get("/")
    def home(u: dict = Depends(user)):
        return RedirectResponse("/admin" if u["admin"] else "/next", status_code=303)

    @app.get("/next")
    def next_item(request: Request, project: str | None = None, u: dict = Depends(user)):
        item = store.next_assignment(u["id"], project=project)
        if item is None:
            return page(request, "done.html", user=u)
        stage = store.stage_of(item.id, u["id"])
        return RedirectResponse(f"/items/{item.id}/stage2" if stage.get("int") else f"/items/{item.id}/stage1", status_code=303)

    @app.get("/items/{item_id}/stage1", response_class=HTMLResponse)
    def stage1(request: Request, item_id: int, u: dict = Depends(user)):
        item = store.item_for(item_id, u["id"], stage=1)  # has no source fields at all
        return page(request, "stage1.html", user=u, item=item, task=item.task, stage=1, reasons=FLAG_REASONS)

    @app.post("/items/{item_id}/stage1")
    def stage1_post(item_id: int, answer: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        yes = _yes_no(answer)
        store.record(item_id=item_id, annotator_id=u["id"], stage="int", answer=yes, justification=justification)
        return RedirectResponse(f"/items/{item_id}/stage2" if yes else "/next", status_code=303)

    @app.get("/items/{item_id}/stage2", response_class=HTMLResponse)
    def stage2(request: Request, item_id: int, u: dict = Depends(user)):
        item = store.item_for(item_id, u["id"], stage=2)
        return page(request, "stage2.html", user=u, item=item, task=item.task, stage=2, reasons=FLAG_REASONS)

    @app.post("/items/{item_id}/stage2")
    def stage2_post(item_id: int, answer: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        store.record(item_id=item_id, annotator_id=u["id"], stage="ais", answer=_yes_no(answer), justification=justification)
        return RedirectResponse("/next", status_code=303)

    @app.post("/items/{item_id}/flag")
    def flag_post(item_id: int, reason: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        store.record(item_id=item_id, annotator_id=u["id"], stage="flag", flag_reason=reason, justification=justification)
        return RedirectResponse("/next", status_code=303)

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request, u: dict = Depends(admin)):
        projects = []
        for p in store.projects():
            rep = store.report(project=p["name"], n_resamples=n_resamples)
            projects.append({"progress": rep["progress"], "report": rep, "n_judgments": len(store.judgments(project=p["name"]))})
        return page(request, "admin.html", user=u, projects=projects, annotators=store.annotators())

    @app.post("/admin/annotators")
    def admin_add(name: str = Form(...), password: str = Form(...), expert: str = Form(""), admin_flag: str = Form("", alias="admin"),
                  u: dict = Depends(admin)):
        store.add_annotator(name.strip(), password=password, admin=bool(admin_flag), expert=bool(expert))
        return RedirectResponse("/admin", status_code=303)

    # --- JSON API (same rules, for scripts and the load test) ------------------
    @app.get("/api/next")
    def api_next(project: str | None = None, u: dict = Depends(user)):
        item = store.next_assignment(u["id"], project=project)
        if item is None:
            return {"item": None}
        return {"item": {"id": item.id, "ext_id": item.ext_id, "task": item.task, "output": item.output, "context": item.context},
                "answered": store.stage_of(item.id, u["id"])}

    @app.post("/api/judgments")
    def api_judge(j: JudgmentIn, u: dict = Depends(user)):
        jid = store.record(item_id=j.item_id, annotator_id=u["id"], stage=j.stage, answer=j.answer, flag_reason=j.flag_reason, justification=j.justification)
        return {"id": jid}

    @app.get("/api/judgments")
    def api_mine(u: dict = Depends(user)):
        # only the caller's own judgments, admins included: the admin reads others through reports and exports
        return {"judgments": store.judgments(annotator_id=u["id"])}

    @app.get("/api/report")
    def api_report(project: str, u: dict = Depends(admin)):
        return store.report(project=project, n_resamples=n_resamples)

    @app.exception_handler(InputError)
    async def _input_error(request: Request, exc: InputError):
        return JSONResponse({"detail": str(exc)}, status_code=400)

    return app


def _yes_no(answer: str) -> bool:
    a = answer.strip().lower()
    if a in ("yes", "y", "1", "true"):
        return True
    if a in ("no", "n", "0", "false"):
        return False
    raise InputError(f"answer must be 'yes' or 'no'; got {answer!r}.")
