"""The AIS annotation web app (FastAPI, server-rendered Jinja2, plain forms; no front-end build, no CDN).

Security model: every route except ``GET/POST /login`` needs a session
cookie: a random token whose sha256 is stored server-side (``ais_sessions``),
so logging out, changing the password or the expiry (12 h by default) ends
it for good, and a restart keeps everyone logged in (no signing key to
lose). The cookie is HttpOnly and SameSite=strict, and Secure with
``secure_cookies=True`` (``--secure-cookies``, for HTTPS). Pages redirect to
``/login`` and ``/api/*`` answer 401 without one.

CSRF: every POST (and PUT/PATCH/DELETE) whose ``Origin`` header, or failing
that ``Referer``, names another site than the one serving the app (or
``Origin: null``) gets 403 before any route runs; browsers send ``Origin``
on every cross-site POST. Scripts that send neither header are not
browsers and need the session cookie anyway. ``trusted_origins`` adds
origins (a reverse proxy's public name).

Logins are throttled (:class:`~veridic.ais.throttle.LoginThrottle`):
exponential backoff per account after 5 failures and per address after 20,
answered 429 with Retry-After before any password hashing, and at most four
password checks (scrypt, 16 MiB each) run at once. Annotators only
ever read their own judgments; ``/admin`` and ``/api/report`` are admin-only.
The stage-1 page never contains the source; ``/items/{id}/stage2`` answers
409 until this annotator's stage-1 "yes" is stored.

>>> from veridic.ais.store import Store
>>> app = create_app(store=Store("sqlite://", init=True), secret="x" * 32)
>>> sorted(r.path for r in app.routes if getattr(r, "path", "").startswith("/api"))
['/api/judgments', '/api/judgments', '/api/next', '/api/report']
"""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import urlsplit
from typing import Any

from veridic.ais.store import FLAG_REASONS, StageError, Store
from veridic.ais.throttle import LoginThrottle
from veridic.errors import ConfigError, InputError, MissingDependencyError

try:
    from fastapi import Depends, FastAPI, Form, HTTPException, Request
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
    from fastapi.templating import Jinja2Templates
    from pydantic import BaseModel
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", extra="ais", purpose="The AIS web app") from None

__all__ = ["PUBLIC_ROUTES", "create_app"]

PUBLIC_ROUTES = frozenset({("GET", "/login"), ("POST", "/login")})
COOKIE = "ais_session"
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
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


def create_app(*, db: str | None = None, store: Store | None = None, secret: str | None = None, n_resamples: int = 2000,
               secure_cookies: bool = False, session_hours: float = 12.0, trusted_origins: tuple[str, ...] = (),
               throttle: LoginThrottle | None = None) -> FastAPI:
    """Build the app over ``store`` (or a :class:`Store` opened on ``db``).

    Sessions live in the database, so no signing key is needed; ``secret`` is
    accepted for old callers and ignored.
    """
    del secret
    if store is None:
        if db is None:
            raise InputError("create_app needs db= (URL or SQLite path) or store=.")
        store = Store(db)
    if not store.has_sessions_table():
        raise ConfigError(f"The database {store.url.split('@')[-1]} predates server-side sessions; upgrade it with `veridic ais init --db ...` (keeps all data).")
    if session_hours <= 0:
        raise ConfigError(f"session_hours must be > 0; got {session_hours}.")
    ttl_s = session_hours * 3600
    throttle = throttle or LoginThrottle()
    hashing = threading.BoundedSemaphore(4)  # scrypt takes 16 MiB per check: bound the concurrent ones (64 MiB)
    trusted = {urlsplit(o).netloc.lower() for o in trusted_origins if o}
    app = FastAPI(title="veridic AIS", docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.globals["fmt"] = _fmt
    app.state.store = store
    app.state.throttle = throttle

    @app.middleware("http")
    async def _same_origin_only(request: Request, call_next):
        if request.method in _UNSAFE:
            bad = _cross_site(request, trusted)
            if bad is not None:
                msg = f"Cross-site request refused: {bad}. Submit the form from this app's own pages."
                if request.url.path.startswith("/api/"):
                    return JSONResponse({"detail": msg}, status_code=403)
                return HTMLResponse(templates.get_template("base.html").render(request=request, user=None, error=msg), status_code=403)
        return await call_next(request)

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
        u = store.session_user(request.cookies.get(COOKIE))
        if u is None:
            raise _NeedLogin(api=request.url.path.startswith("/api/"))
        return u

    def admin(u: dict[str, Any] = Depends(user)) -> dict[str, Any]:
        if not u["admin"]:
            raise HTTPException(status_code=403, detail="admin only")
        return u

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, ctx, status_code=status)

    def logged_in(response, uid: int):
        response.set_cookie(COOKIE, store.create_session(uid, ttl_s=ttl_s), max_age=int(ttl_s), httponly=True, samesite="strict",
                            secure=secure_cookies, path="/")
        return response

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request):
        return page(request, "login.html", user=None)

    @app.post("/login")
    def login(request: Request, name: str = Form(...), password: str = Form(...)):
        address = request.client.host if request.client else None
        wait = throttle.retry_after(name, address)
        if wait > 0:
            secs = max(1, round(wait))
            resp = page(request, "login.html", status=429, user=None, error=f"Too many failed logins; try again in {secs} s.")
            resp.headers["retry-after"] = str(secs)
            return resp
        if not hashing.acquire(timeout=60):
            return HTMLResponse("The server is busy checking passwords; try again shortly.", status_code=503, headers={"retry-after": "2"})
        try:
            uid = store.authenticate(name, password)
        finally:
            hashing.release()
        if uid is None:
            throttle.failed(name, address)
            return page(request, "login.html", status=401, user=None, error="Wrong name or password.")
        throttle.succeeded(name, address)
        store.end_session(request.cookies.get(COOKIE))  # a new login never reuses an old (possibly planted) session
        return logged_in(RedirectResponse("/", status_code=303), uid)

    @app.post("/logout")
    def logout(request: Request, u: dict = Depends(user)):
        store.end_session(request.cookies.get(COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=secure_cookies)
        return response

    @app.get("/account", response_class=HTMLResponse)
    def account(request: Request, u: dict = Depends(user)):
        return page(request, "account.html", user=u)

    @app.post("/account/password")
    def change_password(request: Request, current: str = Form(...), new: str = Form(...), u: dict = Depends(user)):
        with hashing:
            ok = store.authenticate(u["name"], current) == u["id"]
        if not ok:
            return page(request, "account.html", status=403, user=u, error="The current password is wrong.")
        store.set_password(u["name"], password=new)  # ends every session of this annotator, this one included
        return logged_in(RedirectResponse("/", status_code=303), u["id"])

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


def _cross_site(request: Request, trusted: set[str]) -> str | None:
    """Why an unsafe request looks cross-site, or None when it comes from this app (or from a non-browser client)."""
    own = (request.headers.get("host") or request.url.netloc).lower()
    origin = request.headers.get("origin")
    if origin is not None:
        if origin.strip().lower() == "null":
            return "the Origin header is 'null' (a sandboxed or cross-site form)"
        netloc = urlsplit(origin.strip()).netloc.lower()
        return None if netloc in (own, *trusted) else f"Origin {origin[:100]!r} is not this site ({own})"
    referer = request.headers.get("referer")
    if referer is not None:
        netloc = urlsplit(referer.strip()).netloc.lower()
        return None if netloc in (own, *trusted) else f"Referer from {netloc[:100]!r}, not this site ({own})"
    return None


def _yes_no(answer: str) -> bool:
    a = answer.strip().lower()
    if a in ("yes", "y", "1", "true"):
        return True
    if a in ("no", "n", "0", "false"):
        return False
    raise InputError(f"answer must be 'yes' or 'no'; got {answer!r}.")
