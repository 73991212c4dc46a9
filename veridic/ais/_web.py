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
on every cross-site POST. "This site" is the address the server listens on
(and ``localhost`` for a loopback one), never the request's own ``Host``
header, which a DNS-rebinding page controls. Scripts that send neither
header are not browsers and need the session cookie anyway.
``trusted_origins`` adds origins (a reverse proxy's public name, or the
host name annotators type).

Logins are throttled (:class:`~veridic.ais._throttle.LoginThrottle`):
exponential backoff per account after 5 failures (capped at 60 s, so
nobody can lock a user out) and per address after 20, decided atomically
before any password hashing (answered 429 with Retry-After); addresses from
which an account logged in before are exempt from the account and address
counters. Password checks (scrypt, 16 MiB each) run in a pool of
``hash_workers`` threads (2), so their memory is bounded and released
(:func:`bound_malloc`). The client address is the socket's peer:
``X-Forwarded-For`` counts only from proxies named with
``veridic ais serve --forwarded-allow-ips``. Request bodies over
``max_body_bytes`` (1 MiB) get 413 before any of the body is read. Every
page carries a Content-Security-Policy (hashes of the one inline style
and script, nothing else), ``X-Frame-Options: DENY`` and
``X-Content-Type-Options: nosniff``. Annotators only
ever read their own judgments; ``/admin`` and ``/api/report`` are admin-only.
The stage-1 page never contains the source; ``/items/{id}/stage2`` answers
409 until this annotator's stage-1 "yes" is stored.

>>> from veridic.ais._store import Store
>>> app = create_app(store=Store("sqlite://", init=True), secret="x" * 32)
>>> sorted(r.path for r in app.routes if getattr(r, "path", "").startswith("/api"))
['/api/judgments', '/api/judgments', '/api/next', '/api/report']
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as _PoolTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from veridic.ais._store import FLAG_REASONS, StageError, Store
from veridic.ais._throttle import LoginThrottle, Ticket
from veridic.errors import ConfigError, InputError, MissingDependencyError

try:
    from fastapi import Depends, FastAPI, Form, HTTPException, Request
    from fastapi import Path as PathParam
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
    from fastapi.templating import Jinja2Templates
    from pydantic import BaseModel, Field
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("fastapi", extra="ais", purpose="The AIS web app") from None

__all__ = ["PUBLIC_ROUTES", "bound_malloc", "create_app"]

PUBLIC_ROUTES = frozenset({("GET", "/login"), ("POST", "/login")})
COOKIE = "ais_session"
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TEMPLATES = Path(__file__).parent / "templates"


class _NeedLogin(Exception):
    def __init__(self, api: bool):
        self.api = api


MAX_ID = 2**63 - 1  # the database's BIGINT: a larger id is not an item, and must not reach the driver
ItemId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


class JudgmentIn(BaseModel):
    item_id: int = Field(ge=1, le=MAX_ID)
    stage: str
    answer: bool | None = None
    flag_reason: str | None = None
    justification: str | None = None


def _fmt(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def create_app(*, db: str | None = None, store: Store | None = None, secret: str | None = None, n_resamples: int = 2000,
               secure_cookies: bool = False, session_hours: float = 12.0, trusted_origins: tuple[str, ...] = (),
               throttle: LoginThrottle | None = None, max_body_bytes: int = 1 << 20, hash_workers: int = 2, body_timeout_s: float = 20.0) -> FastAPI:
    """Build the app over ``store`` (or a :class:`Store` opened on ``db``).

    Sessions live in the database, so no signing key is needed; ``secret`` is
    accepted for old callers and ignored.
    """
    if max_body_bytes < 1024:
        raise ConfigError(f"max_body_bytes must be >= 1024 (a login form); got {max_body_bytes}.")
    if body_timeout_s <= 0:
        raise ConfigError(f"body_timeout_s must be > 0; got {body_timeout_s}.")
    if hash_workers < 1:
        raise ConfigError(f"hash_workers must be >= 1; got {hash_workers}.")
    del secret
    store = _open_store(db=db, store=store)
    if session_hours <= 0:
        raise ConfigError(f"session_hours must be > 0; got {session_hours}.")
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.globals["fmt"] = _fmt
    site = _Site(store=store, throttle=throttle or LoginThrottle(),
                 # scrypt takes 16 MiB per check: a few threads of our own hash, so the memory is bounded and the pages' threads stay free
                 hashing=ThreadPoolExecutor(max_workers=hash_workers, thread_name_prefix="ais-scrypt"),
                 templates=templates, ttl_s=session_hours * 3600, secure_cookies=secure_cookies, n_resamples=n_resamples)
    app = FastAPI(title="veridic AIS", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = site.store
    app.state.throttle = site.throttle
    app.state.hashing = site.hashing
    _add_guards(app, site, trusted={urlsplit(o).netloc.lower() for o in trusted_origins if o}, max_body_bytes=max_body_bytes,
                body_timeout_s=body_timeout_s)
    _add_session_routes(app, site)
    _add_annotation_routes(app, site)
    _add_admin_routes(app, site)
    _add_api_routes(app, site)
    return app


def _open_store(*, db: str | None, store: Store | None) -> Store:
    """``store``, or a :class:`Store` opened on ``db``; either way one whose database holds server-side sessions."""
    if store is None:
        if db is None:
            raise InputError("create_app needs db= (URL or SQLite path) or store=.")
        store = Store(db)
    if not store.has_sessions_table():
        raise ConfigError(f"The database {store.url.split('@')[-1]} predates server-side sessions; upgrade it with `veridic ais init --db ...` (keeps all data).")
    return store


@dataclass
class _Site:
    """What the routes share: the store, the login throttle, the password-hashing pool, the templates and the
    session settings, with the dependencies (``user``, ``admin``) and answers (``page``, ``logged_in``) built on them."""

    store: Store
    throttle: LoginThrottle
    hashing: ThreadPoolExecutor
    templates: Jinja2Templates
    ttl_s: float
    secure_cookies: bool
    n_resamples: int

    def check_password(self, name: str, password: str) -> int | None | bool:
        """The annotator's id, None for a wrong password, False when the pool is too busy (60 s)."""
        try:
            return self.hashing.submit(self.store.authenticate, name, password).result(timeout=60)
        except _PoolTimeout:
            return False

    def user(self, request: Request) -> dict[str, Any]:
        """The logged-in annotator (a route dependency); pages without a session go to /login, the API answers 401."""
        u = self.store.session_user(request.cookies.get(COOKIE))
        if u is None:
            raise _NeedLogin(api=request.url.path.startswith("/api/"))
        return u

    def admin(self, request: Request) -> dict[str, Any]:
        """The logged-in annotator when an admin (a route dependency); 403 for anyone else."""
        u = self.user(request)
        if not u["admin"]:
            raise HTTPException(status_code=403, detail="admin only")
        return u

    def page(self, request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return self.templates.TemplateResponse(request, name, ctx, status_code=status)

    def logged_in(self, response, uid: int):
        """``response`` with a new session cookie for annotator ``uid``."""
        response.set_cookie(COOKIE, self.store.create_session(uid, ttl_s=self.ttl_s), max_age=int(self.ttl_s), httponly=True,
                            samesite="strict", secure=self.secure_cookies, path="/")
        return response


def _add_guards(app: FastAPI, site: _Site, *, trusted: set[str], max_body_bytes: int, body_timeout_s: float) -> None:
    """The layers every request passes before a route, in this order from the outside: the body limit, then the
    same-origin check for unsafe methods (which also sets the security headers on every answer); and the
    answers to a missing login (redirect or 401), a stage out of order (409) and bad input (400)."""
    security_headers = _security_headers()
    templates = site.templates

    @app.middleware("http")
    async def _same_origin_only(request: Request, call_next):
        response = await _checked(request, call_next)
        for k, v in security_headers.items():
            response.headers.setdefault(k, v)
        return response

    async def _checked(request: Request, call_next):
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

    @app.exception_handler(InputError)
    async def _input_error(request: Request, exc: InputError):
        return JSONResponse({"detail": str(exc)}, status_code=400)

    app.add_middleware(_BodyLimit, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s, headers=security_headers)  # added last: outermost


def _add_session_routes(app: FastAPI, site: _Site) -> None:
    """Logging in (throttled, the password checked in the hashing pool), logging out, and the account page."""
    store, throttle, page, user = site.store, site.throttle, site.page, site.user

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request):
        return page(request, "login.html", user=None)

    @app.post("/login")
    def login(request: Request, name: str = Form(...), password: str = Form(...)):
        # the peer address; uvicorn replaces it with X-Forwarded-For only for proxies named in --forwarded-allow-ips
        address = request.client.host if request.client else None
        ticket = throttle.begin(name, address)  # decided (and the check reserved) before any hashing
        if not isinstance(ticket, Ticket):
            if ticket < 0:
                return HTMLResponse("The server is busy checking passwords; try again shortly.", status_code=503, headers={"retry-after": "2"})
            secs = max(1, round(ticket))
            resp = page(request, "login.html", status=429, user=None, error=f"Too many failed logins; try again in {secs} s.")
            resp.headers["retry-after"] = str(secs)
            return resp
        uid: int | None | bool = False
        try:
            uid = site.check_password(name, password)
        finally:
            throttle.end(ticket, ok=None if uid is False else uid is not None)
        if uid is False:
            return HTMLResponse("The server is busy checking passwords; try again shortly.", status_code=503, headers={"retry-after": "2"})
        if uid is None:
            return page(request, "login.html", status=401, user=None, error="Wrong name or password.")
        store.end_session(request.cookies.get(COOKIE))  # a new login never reuses an old (possibly planted) session
        return site.logged_in(RedirectResponse("/", status_code=303), uid)

    @app.post("/logout")
    def logout(request: Request, u: dict = Depends(user)):
        store.end_session(request.cookies.get(COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=site.secure_cookies)
        return response

    @app.get("/account", response_class=HTMLResponse)
    def account(request: Request, u: dict = Depends(user)):
        return page(request, "account.html", user=u)

    @app.post("/account/password")
    def change_password(request: Request, current: str = Form(...), new: str = Form(...), u: dict = Depends(user)):
        ok = site.check_password(u["name"], current) == u["id"]
        if not ok:
            return page(request, "account.html", status=403, user=u, error="The current password is wrong.")
        try:
            store.set_password(u["name"], password=new)  # ends every session of this annotator, this one included
        except InputError as exc:
            return page(request, "account.html", status=400, user=u, error=str(exc))
        return site.logged_in(RedirectResponse("/", status_code=303), u["id"])


def _add_annotation_routes(app: FastAPI, site: _Site) -> None:
    """The annotator's pages: the next assignment, stage 1 (no source), stage 2 (after a stage-1 "yes"), and flags."""
    store, page, user = site.store, site.page, site.user

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
    def stage1(request: Request, item_id: ItemId, u: dict = Depends(user)):
        item = store.item_for(item_id, u["id"], stage=1)  # has no source fields at all
        return page(request, "stage1.html", user=u, item=item, task=item.task, stage=1, reasons=FLAG_REASONS)

    @app.post("/items/{item_id}/stage1")
    def stage1_post(item_id: ItemId, answer: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        yes = _yes_no(answer)
        store.record(item_id=item_id, annotator_id=u["id"], stage="int", answer=yes, justification=justification)
        return RedirectResponse(f"/items/{item_id}/stage2" if yes else "/next", status_code=303)

    @app.get("/items/{item_id}/stage2", response_class=HTMLResponse)
    def stage2(request: Request, item_id: ItemId, u: dict = Depends(user)):
        item = store.item_for(item_id, u["id"], stage=2)
        return page(request, "stage2.html", user=u, item=item, task=item.task, stage=2, reasons=FLAG_REASONS)

    @app.post("/items/{item_id}/stage2")
    def stage2_post(item_id: ItemId, answer: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        store.record(item_id=item_id, annotator_id=u["id"], stage="ais", answer=_yes_no(answer), justification=justification)
        return RedirectResponse("/next", status_code=303)

    @app.post("/items/{item_id}/flag")
    def flag_post(item_id: ItemId, reason: str = Form(...), justification: str = Form(""), u: dict = Depends(user)):
        store.record(item_id=item_id, annotator_id=u["id"], stage="flag", flag_reason=reason, justification=justification)
        return RedirectResponse("/next", status_code=303)


def _add_admin_routes(app: FastAPI, site: _Site) -> None:
    """The admin's page (every project's progress and report) and adding annotators."""
    store, page, admin = site.store, site.page, site.admin

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request, u: dict = Depends(admin)):
        projects = []
        for p in store.projects():
            rep = store.report(project=p["name"], n_resamples=site.n_resamples)
            projects.append({"progress": rep["progress"], "report": rep, "n_judgments": len(store.judgments(project=p["name"]))})
        return page(request, "admin.html", user=u, projects=projects, annotators=store.annotators())

    @app.post("/admin/annotators")
    def admin_add(request: Request, name: str = Form(...), password: str = Form(...), expert: str = Form(""), admin_flag: str = Form("", alias="admin"),
                  u: dict = Depends(admin)):
        try:
            store.add_annotator(name.strip(), password=password, admin=bool(admin_flag), expert=bool(expert))
        except InputError as exc:
            return page(request, "base.html", status=400, user=u, error=f"{exc} Go back to /admin to try again.")
        return RedirectResponse("/admin", status_code=303)


def _add_api_routes(app: FastAPI, site: _Site) -> None:
    """The JSON API: the same rules as the pages, for scripts and the load test."""
    store, user, admin = site.store, site.user, site.admin

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
        return store.report(project=project, n_resamples=site.n_resamples)


class _BodyLimit:
    """Pure-ASGI outer layer: a request body over ``max_body_bytes`` gets 413 before the app (or the login check) reads it.

    A declared ``Content-Length`` over the limit is refused unread; a body
    sent without one (chunked) is counted as it arrives and refused at the
    limit, so no more than the limit is ever held. A body still incomplete
    ``body_timeout_s`` after the request began gets 408 and the connection
    closes (a slow sender holds no thread for longer).
    """

    def __init__(self, app, *, max_body_bytes: int, body_timeout_s: float, headers: dict[str, str]):
        self.app, self.limit, self.body_timeout_s = app, max_body_bytes, body_timeout_s
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await self._too_large(send)
        seen = 0
        refused: int | None = None
        started = False
        body_done = False
        deadline = asyncio.get_running_loop().time() + self.body_timeout_s

        async def counted():
            nonlocal seen, refused, body_done
            if body_done:
                return await receive()  # after the body: a wait for the disconnect, which has no deadline
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
            except TimeoutError:
                refused = 408
                raise _TooLarge from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if seen > self.limit:
                    refused = 413
                    raise _TooLarge
            return message

        async def tracked(message):
            nonlocal started
            if refused and not started:
                return  # the app's answer to a cut-off body (a parse error) is replaced by the 413 below
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            if not refused:
                raise
        if refused and not started:
            await self._too_large(send, status=refused)

    async def _too_large(self, send, status: int = 413):
        body = (f"Request body over the limit of {self.limit:,} bytes." if status == 413 else
                f"The request body did not arrive within {self.body_timeout_s:g} s.").encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"), *self.headers]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def _security_headers() -> dict[str, str]:
    """CSP allowing only base.html's own inline style and script (by hash), and nothing from elsewhere."""
    base = (TEMPLATES / "base.html").read_text(encoding="utf-8")

    def hashes(tag: str) -> str:
        return " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(m.encode()).digest()).decode()}'"
                        for m in re.findall(rf"<{tag}>(.*?)</{tag}>", base, flags=re.S))

    csp = (f"default-src 'none'; style-src {hashes('style')}; script-src {hashes('script')}; img-src 'self'; "
           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    return {"content-security-policy": csp, "x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "same-origin"}


def bound_malloc(*, arenas: int = 2, mmap_threshold: int = 1 << 20) -> bool:
    """Make glibc hand scrypt's 16 MiB buffers back to the system: few arenas, and large blocks always mmap'd.

    glibc gives each thread that allocates its own arena (up to 8 per core)
    and raises its mmap threshold after each large free, so the buffers of a
    login flood stay in the arenas: 85 -> 696 MB, still 696 MB later.
    Fixing the threshold keeps every block over 1 MiB mmap'd (returned on
    free); ``MALLOC_ARENA_MAX`` does the same for the arenas when set before
    start-up. Returns False where there is no glibc (nothing to do).
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold, m_arena_max = -3, -8
    return bool(mallopt(m_arena_max, arenas)) and bool(mallopt(m_mmap_threshold, mmap_threshold))


def _own_origins(request: Request) -> tuple[str, ...]:
    """host:port pairs that are this app: the address the server listens on (and ``localhost`` for loopback)."""
    server = request.scope.get("server")
    if not server:
        return ()
    host, port = str(server[0]).lower(), server[1]
    hosts = {host, f"[{host}]" if ":" in host else host}
    if host in ("127.0.0.1", "::1", "localhost"):
        hosts |= {"localhost", "127.0.0.1", "[::1]"}
    out = set()
    for h in hosts:
        out.add(f"{h}:{port}")
        if port in (80, 443, None):
            out.add(h)
    return tuple(sorted(out))


def _cross_site(request: Request, trusted: set[str]) -> str | None:
    """Why an unsafe request looks cross-site, or None when it comes from this app (or from a non-browser client)."""
    own_all = _own_origins(request)
    own = own_all[0] if own_all else "?"
    origin = request.headers.get("origin")
    if origin is not None:
        if origin.strip().lower() == "null":
            return "the Origin header is 'null' (a sandboxed or cross-site form)"
        netloc = urlsplit(origin.strip()).netloc.lower()
        return None if netloc in (*own_all, *trusted) else f"Origin {origin[:100]!r} is not this site ({own}; add --trusted-origin for another name)"
    referer = request.headers.get("referer")
    if referer is not None:
        netloc = urlsplit(referer.strip()).netloc.lower()
        return None if netloc in (*own_all, *trusted) else f"Referer from {netloc[:100]!r}, not this site ({own}; add --trusted-origin for another name)"
    return None


def _yes_no(answer: str) -> bool:
    a = answer.strip().lower()
    if a in ("yes", "y", "1", "true"):
        return True
    if a in ("no", "n", "0", "false"):
        return False
    raise InputError(f"answer must be 'yes' or 'no'; got {answer!r}.")
