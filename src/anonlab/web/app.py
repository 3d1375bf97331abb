"""The web app on Starlette (the one module that imports the web framework and its server).

Routes: ``/`` (open a table), ``/open`` and ``/upload``, ``/d/{id}`` (a table's profile and
the question form), ``/d/{id}/ask`` (an answer), ``/d/{id}/job`` (the job editor; a POST
starts the job), ``/jobs/{id}`` (progress, then before and after), ``/jobs/{id}/release``
(a POST writes a release that waited for confirmation) and
``/jobs/{id}/files/{release|job|report}`` (downloads).

Safety, in :class:`_Guard` and :class:`~anonlab.web.state.Workspace`: requests must name an
allowed host (no DNS rebinding) and carry the access token (Jupyter's model: given once in
the address, then kept in an HttpOnly, SameSite=Strict cookie); a form may only be posted
from the app's own pages; request bodies are bounded (the upload limit); every page forbids
the browser to fetch anything from elsewhere; errors are one line in the page, never a
traceback, a path of the server or a Python name; files are read and written under the
served folder only, inputs never overwritten; questions about every subset are bounded as
the report bounds them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import ipaddress
import re
import socket
import sys
import traceback
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import yaml
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartParser
from starlette.requests import Request, cookie_parser
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from anonlab import api
from anonlab.io.job import load_yaml, parse_job
from anonlab.report.html import cli_command, render_explore
from anonlab.web import pages
from anonlab.web.state import Dataset, Workspace, guarded, one_line, parse_hierarchy_text

__all__ = ["LOOPBACK_NAMES", "check_token", "create_app", "run"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Pages may load only themselves: no script, no address outside the app.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # a form posted here carries its origin
    (b"x-frame-options", b"DENY"),
]
#: Room for the form fields and multipart headers around an upload.
_FORM_SLACK = 1 << 20
#: Host names every app answers to (this machine's).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
#: What an access token and a host name given by the user may hold.
_TOKEN = re.compile(r"[A-Za-z0-9._~-]{16,}")
_HOST_NAME = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)*\.?")


class _TooLarge(api.InputError):
    """A request body above the limit (the page says so, with status 413)."""


def check_token(token: str) -> str:
    """``token`` if it can serve as an access token: 16 or more letters, digits, ``._~-``.

    Parameters
    ----------
    token : str

    Returns
    -------
    str

    Raises
    ------
    ParameterError
        A shorter token (easy to guess), or characters an address or a cookie cannot carry.

    Examples
    --------
    >>> check_token("correct-horse-battery-staple")
    'correct-horse-battery-staple'
    """
    if not _TOKEN.fullmatch(token):
        raise api.ParameterError(
            "The access token must have at least 16 characters, letters, digits and . _ ~ - "
            f"only (got {len(token)} characters); leave it out for a random one."
        )
    return token


def _host_names(host: str, allowed: Iterable[str]) -> set[str]:
    """The host names requests may name: this machine's, the bound address and ``allowed``."""
    names = {*LOOPBACK_NAMES, host.strip("[]").lower()}
    for name in allowed:
        bare = name.strip().strip("[]").lower()
        if not _HOST_NAME.fullmatch(bare) and not _is_address(bare):
            raise api.ParameterError(
                f"An allowed host is a name or an address such as tables.example.org or "
                f"192.0.2.7 (no wildcard, port or scheme); got {name!r}."
            )
        names.add(bare)
    return names


def _is_address(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class _Guard:
    """ASGI middleware: host, token and origin checks, body limits, security headers."""

    def __init__(
        self, app: Any, *, hosts: set[str], max_body: int, token: str | None, workspace: Workspace
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body = max_body
        self.token = token
        self.workspace = workspace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            host = urlsplit("//" + headers.get("host", "")).hostname or ""
        except ValueError:  # a malformed Host header
            host = ""
        if host not in self.hosts:
            await _plain(
                send,
                400,
                "This app answers requests for its own addresses only; to reach it by "
                "another name, start it with --allow-host NAME.",
            )
            return
        if self.token is not None and not await self._admitted(scope, headers, send):
            return
        origin = headers.get("origin")
        if scope["method"] == "POST" and origin and urlsplit(origin).netloc != headers.get("host"):
            await _plain(send, 403, "A form from another site was refused.")
            return
        limit = self.max_body + _FORM_SLACK if scope["path"] == "/upload" else _FORM_SLACK
        if int(headers.get("content-length", "0") or 0) > limit:
            await _plain(send, 413, _too_large(self.max_body))
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge(_too_large(self.max_body))
            return message

        async def with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = list(message.get("headers", [])) + _HEADERS
            await send(message)

        try:
            await self.app(scope, counted, with_headers)
        except _TooLarge:
            if not started:
                await _plain(send, 413, _too_large(self.max_body))

    async def _admitted(self, scope: Scope, headers: dict[str, str], send: Send) -> bool:
        """Whether the request carries the token in its cookie; else answer it here: the
        token in the address sets the cookie and leads to the same page without it."""
        assert self.token is not None
        port = (scope.get("server") or ("", ""))[1]
        cookie = f"anonlab-token-{port}"  # one per port: apps side by side keep theirs
        if _same(cookie_parser(headers.get("cookie", "")).get(cookie), self.token):
            return True
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == "token"]
        if given and scope["method"] in ("GET", "HEAD") and _same(given[-1], self.token):
            raw = scope.get("raw_path") or scope["path"].encode()
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            # "/" + the path without its leading slashes: never "//elsewhere"
            location = "/" + raw.decode("latin-1").lstrip("/") + (f"?{rest}" if rest else "")
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", location.encode("latin-1")),
                        (
                            b"set-cookie",
                            f"{cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode(),
                        ),
                        (b"cache-control", b"no-store"),
                        *_HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return False
        await _plain(
            send,
            403,
            "This app needs its access token: open the address anonlab serve printed when it "
            "started (it ends with ?token=…).",
        )
        return False


def _too_large(limit: int) -> str:
    return f"The upload is larger than the limit of {limit / 2**20:.0f} MB ({limit:,} bytes)."


async def _plain(send: Send, status: int, message: str) -> None:
    body = pages.error_page(message).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), *_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status)


def _number(text: str | None, name: str, kind: type[int] | type[float]) -> Any:
    value = (text or "").strip()
    if not value:
        return None
    try:
        return kind(value)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise api.ParameterError(f"{name} must be {what}; got {value!r}.") from None


def create_app(
    root: str,
    *,
    token: str | None,
    max_upload: int = 100 * 2**20,
    host: str = "127.0.0.1",
    allow_hosts: Iterable[str] = (),
    keep_outputs: bool = False,
) -> Any:
    """The app serving ``root``.

    Parameters
    ----------
    root : str
        The folder whose files the app may read and write under.
    token : str or None
        The access token every request must carry (None: none; on loopback only).
    max_upload : int
        The largest upload, in bytes (also once decompressed).
    host : str
        The address the server listens on (requests must name it, a loopback name or one of
        ``allow_hosts``).
    allow_hosts : iterable of str
        More host names requests may name.
    keep_outputs : bool
        Keep the uploads and the jobs' files when the app stops.

    Returns
    -------
    ASGI application

    Raises
    ------
    ParameterError
        No token with a host other than loopback, a bad token or host name.
    """
    from anonlab.web import is_loopback

    if token is None and not is_loopback(host):
        raise api.ParameterError(
            f"Listening on {host} without an access token would let anyone who reaches the "
            "port read the tables; keep the token (leave out --no-token) or listen on "
            "127.0.0.1."
        )
    if token is not None:
        check_token(token)
    hosts = _host_names(host, allow_hosts)
    ws = Workspace(root, max_upload, keep_outputs=keep_outputs)
    # an upload stays in memory up to the limit: nothing is written outside the served folder
    MultiPartParser.spool_max_size = max(MultiPartParser.spool_max_size, max_upload + 1)

    def dataset(request: Request) -> Dataset:
        ds = ws.datasets.get(request.path_params["id"])
        if ds is None:
            raise HTTPException(404, "This table is not open (any more); open it again.")
        return ds

    async def home(request: Request) -> Response:
        return _html(pages.home_page(ws))

    async def open_table(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=20)
        source = str(form.get("source", ""))
        try:
            if source == "adult":
                ds = await run_in_threadpool(ws.open_adult)
            else:
                ds = await run_in_threadpool(
                    lambda: ws.open_file(
                        str(form.get("path", "")),
                        separator=str(form.get("separator", ",")),
                        drop_missing=bool(form.get("drop_missing")),
                    )
                )
        except Exception as exc:  # one line in the page
            return _html(pages.home_page(ws, error=one_line(exc, ws.root)), 400)
        return RedirectResponse(f"/d/{ds.id}", status_code=303)

    async def upload(request: Request) -> Response:
        try:
            form = await request.form(max_files=1, max_fields=20)
            item = form.get("file")
            if item is None or isinstance(item, str) or not item.filename:
                raise api.InputError("Choose a file to upload.")
            content = await item.read()
            if len(content) > ws.max_upload:
                raise _TooLarge(_too_large(ws.max_upload))
            ds = await run_in_threadpool(
                lambda: ws.upload(
                    str(item.filename),
                    content,
                    separator=str(form.get("separator", ",")),
                    drop_missing=bool(form.get("drop_missing")),
                )
            )
        except Exception as exc:
            status = 413 if isinstance(exc, _TooLarge) else 400
            return _html(pages.home_page(ws, error=one_line(exc, ws.root)), status)
        return RedirectResponse(f"/d/{ds.id}", status_code=303)

    async def show(request: Request) -> Response:
        ds = dataset(request)
        return _html(await run_in_threadpool(pages.dataset_page, ds))

    async def ask(request: Request) -> Response:
        ds = dataset(request)
        q = request.query_params
        values: dict[str, Any] = {
            "attr": q.getlist("attr"),
            "scope": q.get("scope", "set"),
            "k": q.get("k", ""),
            "delta": q.get("delta", ""),
            "find_delta": bool(q.get("find_delta")),
            "max_k": q.get("max_k", ""),
            "sampling_fraction": q.get("sampling_fraction", ""),
            "weight": q.get("weight", ""),
        }
        what = q.get("what", "question")

        def work() -> str:
            notes: list[str] = []
            try:
                with guarded(notes):
                    answer, args = _answer(ds, values, what)
            except Exception as exc:
                error = one_line(exc, ws.root)
                return pages.dataset_page(ds, values=values, error=error, notes=notes)
            command = cli_command(ds.data_argument, "diagnose", *args, options=ds.options)
            return pages.dataset_page(
                ds, values=values, answer=answer, commands=[command], notes=notes
            )

        text = await run_in_threadpool(work)
        return _html(text, 400 if 'class="error"' in text else 200)

    async def job_form(request: Request) -> Response:
        ds = dataset(request)
        return _html(pages.job_form_page(ds, api.job_choices()))

    async def start_job(request: Request) -> Response:
        ds = dataset(request)
        form = await request.form(max_files=0, max_fields=200)
        values: dict[str, Any] = {
            "qi": [str(v) for v in form.getlist("qi")],
            "sensitive": [str(v) for v in form.getlist("sensitive")],
            "insensitive": [],
            **{
                key: str(form.get(key, ""))
                for key in (
                    "k", "l", "suppression", "metric", "algorithm", "yaml",
                    "sampling_fraction", "weight",
                )
            },
        }  # fmt: skip
        try:
            _read_roles(form, values)
            population = _population(values)
            job, text, sensitive = await run_in_threadpool(_job, ws, ds, values)
        except Exception as exc:
            error = one_line(exc, ws.root)
            page = pages.job_form_page(ds, api.job_choices(), values=values, error=error)
            return _html(page, 400)
        run = ws.start_job(ds, job, text, sensitive, population=population)
        return RedirectResponse(f"/jobs/{run.id}", status_code=303)

    async def job_status(request: Request) -> Response:
        run = ws.jobs.get(request.path_params["id"])
        if run is None:
            raise HTTPException(404, "No such job.")
        return _html(await run_in_threadpool(pages.job_page, run))

    async def release(request: Request) -> Response:
        run = ws.jobs.get(request.path_params["id"])
        if run is None:
            raise HTTPException(404, "No such job.")
        await run_in_threadpool(ws.release, run)
        return RedirectResponse(f"/jobs/{run.id}", status_code=303)

    async def explore(request: Request) -> Response:
        run = ws.jobs.get(request.path_params["id"])
        if run is None or run.job is None or run.status not in ("done", "held"):
            raise HTTPException(404, "No such job.")

        def work() -> str:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the job's page said them
                found = api.explore(
                    run.dataset.table, run.job, ks=EXPLORE_KS, algorithms=EXPLORE_ALGORITHMS
                )
            found.data_argument = run.dataset.name
            return render_explore(found)

        return _html(await run_in_threadpool(work))

    async def download(request: Request) -> Response:
        run = ws.jobs.get(request.path_params["id"])
        kind = request.path_params["kind"]
        if run is None or run.status != "done" or kind not in run.files:
            raise HTTPException(404, "No such file.")
        path = run.files[kind]
        types = {"release": "text/csv", "job": "application/yaml", "report": "text/html"}
        return FileResponse(path, media_type=types[kind], filename=path.name)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        detail = getattr(exc, "detail", "") or "Not found."
        return _html(pages.error_page(str(detail)), status)

    async def server_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, _TooLarge):
            return _html(pages.error_page(one_line(exc, ws.root)), 413)
        print("anonlab web: an unexpected error:", file=sys.stderr)
        traceback.print_exception(exc, file=sys.stderr)  # the server's log, not the page
        return _html(pages.error_page(one_line(exc, ws.root)), 500)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:  # the app stops: its uploads and outputs go, unless kept
            await run_in_threadpool(ws.close)

    routes = [
        Route("/", home),
        Route("/open", open_table, methods=["POST"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/d/{id}", show),
        Route("/d/{id}/ask", ask),
        Route("/d/{id}/job", job_form),
        Route("/d/{id}/job", start_job, methods=["POST"]),
        Route("/jobs/{id}", job_status),
        Route("/jobs/{id}/release", release, methods=["POST"]),
        Route("/jobs/{id}/explore", explore),
        Route("/jobs/{id}/files/{kind}", download),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
    app.state.workspace = ws
    return _Guard(app, hosts=hosts, max_body=max_upload, token=token, workspace=ws)


#: The candidates of the app's Explore page: these k's by these algorithms.
EXPLORE_KS = (2, 5, 10)
EXPLORE_ALGORITHMS = ("optimal", "top_down", "murakami_uno", "mondrian", "local_suppression")


def _normal(text: str) -> list[str]:
    """A hierarchy's text without blank lines and spaces around its cells."""
    return [
        ";".join(c.strip() for c in line.split(";")) for line in text.splitlines() if line.strip()
    ]


def _read_roles(form: Any, values: dict[str, Any]) -> None:
    """The per-column roles of the job form (``role:COLUMN``), in place of the lists of
    quasi-identifiers and sensitive attributes when given."""
    roles = {
        str(k)[len("role:") :]: str(v) for k, v in form.multi_items() if str(k).startswith("role:")
    }
    if not roles:
        return
    values["qi"] = [c for c, r in roles.items() if r == "quasi-identifier"]
    values["sensitive"] = [c for c, r in roles.items() if r == "sensitive"]
    values["insensitive"] = [c for c, r in roles.items() if r == "insensitive"]
    values["hierarchy_texts"] = {
        str(k)[len("hierarchy:") :]: str(v)
        for k, v in form.multi_items()
        if str(k).startswith("hierarchy:")
    }
    values["max_levels"] = {
        str(k)[len("max_level:") :]: int(str(v))
        for k, v in form.multi_items()
        if str(k).startswith("max_level:") and str(v).strip().isdigit()
    }
    weights = [c for c, r in roles.items() if r == "weight"]
    if len(weights) > 1:
        raise api.ParameterError(
            f"Two columns are sampling weights ({', '.join(weights)}); choose one."
        )
    if weights:
        values["weight"] = weights[0]


def _population(values: dict[str, Any]) -> dict[str, Any]:
    """The population a form tells (a sampling fraction or a weight column), as
    :func:`anonlab.api.risk` takes it; refused when both are given."""
    out: dict[str, Any] = {}
    fraction = _number(values.get("sampling_fraction", ""), "the sampling fraction", float)
    if fraction is not None:
        out["sampling_fraction"] = fraction
    if values.get("weight"):
        out["weight"] = str(values["weight"])
    if len(out) > 1:
        raise api.ParameterError(
            "Give the sampling fraction or the weight column, not both: the weights say "
            "how large the population is."
        )
    return out


def _answer(ds: Dataset, values: dict[str, Any], what: str) -> tuple[Any, list[str]]:
    """Ask the API the question the form describes; the command line's options for it."""
    attrs = list(values["attr"])
    if not attrs:
        raise api.ParameterError("Choose at least one attribute.")
    k = _number(values["k"], "k", int)
    delta = _number(values["delta"], "δ", float)
    max_k = _number(values["max_k"], "max k", int)
    find = bool(values["find_delta"])
    if what == "qis" or (what == "question" and values["scope"] != "set"):
        ks = min(max_k or _DEFAULT_MAX_K, ds.table.n_rows) if find and k is None else 1
        _bounded(len(set(attrs)), max(ks, 1))
    joined = ",".join(attrs)
    population = _population(values)
    if population and what != "risk":
        raise api.ParameterError(
            "The sampling fraction and the weight column apply to the risk only; clear them."
        )
    if what in ("risk", "qis"):
        given = [n for n, v in (("k", k), ("δ", delta), ("max k", max_k)) if v is not None]
        if find:
            given.append("find the smallest δ")
        if given:
            raise api.ParameterError(
                f"{', '.join(given)} does not apply to this question; clear it."
            )
        if what == "risk":
            flags = [f"--{k.replace('_', '-')}={v}" for k, v in population.items()]
            return api.risk(ds.engine, attrs, **population), ["--qi", joined, "--risk", *flags]
        return api.find_quasi_identifiers(ds.engine, attrs), ["--find-qis", "--attributes", joined]
    one_set = values["scope"] == "set"
    args = ["--qi" if one_set else "--attributes", joined]
    for flag, v in (("--k", k), ("--delta", delta), ("--max-k", max_k)):
        if v is not None:
            args += [flag, str(v)]
    if find:
        args.append("--find-delta")
    answer = api.diagnose(
        ds.engine,
        quasi_identifiers=attrs if one_set else None,
        attributes=None if one_set else attrs,
        k=k,
        delta=delta,
        find_delta=find,
        max_k=max_k,
    )
    return answer, args


#: The largest k of Q12 when none is given (the API's default).
_DEFAULT_MAX_K = 50
#: The most rows a question about every subset lists here: the report's lattice of subsets.
MAX_LISTED = 2**api.MAX_REPORT_ATTRIBUTES - 1


def _bounded(n_attributes: int, per_subset: int) -> None:
    """Refuse a question about every subset of ``n_attributes`` that lists more rows (with
    ``per_subset`` rows a subset: the values of k of Q12) than the report's lattice has."""
    subsets = 2**n_attributes - 1
    if subsets * per_subset <= MAX_LISTED:
        return
    per = f" × {per_subset} values of k" if per_subset > 1 else ""
    count = f"{subsets:,}" if n_attributes <= 40 else f"2^{n_attributes} - 1"
    raise api.ParameterError(
        f"This question goes through every subset of {n_attributes} attributes: "
        f"{count} subsets{per}. The app lists at most {MAX_LISTED:,}, as many as the "
        f"report's lattice of {api.MAX_REPORT_ATTRIBUTES} attributes. Choose fewer attributes"
        f"{' or a smaller max k' if per_subset > 1 else ''}, or ask on the command line "
        "(anonlab diagnose --attributes ...)."
    )


def _job(ws: Workspace, ds: Dataset, values: dict[str, Any]) -> tuple[Any, str, list[str]]:
    """The job the form asks for, its YAML text and its sensitive attributes (validated)."""
    text = values["yaml"].strip()
    if text:
        source = "the job in the page"
        spec = parse_job(load_yaml(text, source=source), base_dir=ws.root, source=source)
        # the label named the job in parse errors; it is no file to read (or to protect)
        spec = dataclasses.replace(spec, source=None)
        for path in api.job_input_files(spec):
            if not path.resolve().is_relative_to(ws.root):
                raise api.InputError(
                    f"The job reads {str(path)!r}, outside the served folder; it cannot be read."
                )
        api.validate_job(ds.table, spec)  # refused here, not on the job's page
        header = "# paths are relative to the served folder\n"
        return spec, header + text + "\n", list(spec.sensitive)
    qis = list(values["qi"])
    if not qis:
        raise api.ParameterError("Choose at least one quasi-identifier.")
    sensitive = list(values["sensitive"])
    k = _number(values["k"], "k", int)
    l_div = _number(values["l"], "l", int)
    models: list[dict[str, Any]] = [{"k_anonymity": {"k": k}}] if k is not None else []
    if l_div is not None:
        if not sensitive:
            raise api.ParameterError("l-diversity needs a sensitive attribute; choose one.")
        models += [{"distinct_l_diversity": {"attribute": s, "l": l_div}} for s in sensitive]
    suppression = _number(values["suppression"], "the suppression limit", float)

    # the other columns are dropped: anonymize refuses to release, undeclared, a column that
    # identifies people, and the form has no other role for them (a job file has)
    weight = str(values.get("weight") or "") or None  # sampling weights: dropped, not QIs
    insensitive = list(values.get("insensitive") or [])
    limits = dict(values.get("max_levels") or {})
    own = dict(ds.hierarchies)  # a hierarchy edited in the form replaces the column's
    for q, text in (values.get("hierarchy_texts") or {}).items():
        if q in qis and _normal(text) != _normal(ds.hierarchy_text(q) or ""):
            own[q] = parse_hierarchy_text(text, q)
    others = [
        c
        for c in [*ds.table.names, *ds.table.nested]
        if c not in {*qis, *sensitive, *insensitive, weight}
    ]

    def job(hierarchy: Callable[[str], Any]) -> dict[str, Any]:
        # a column without a hierarchy of its own gets one inferred from its values, its rare
        # categories grouped first (anonlab.data.auto)
        return {
            "quasi_identifiers": {
                q: {
                    **(
                        {"hierarchy": hierarchy(q)}
                        if q in own
                        else {"auto": dict(AUTO["auto"])}  # (a copy each: no YAML anchors)
                    ),
                    **({"max_level": limits[q]} if q in limits else {}),
                }
                for q in qis
            },
            "sensitive": sensitive,
            "identifiers": others,
            **({"insensitive": insensitive} if insensitive else {}),
            **({"weight": weight} if weight else {}),
            "models": models,
            "suppression": 0.0 if suppression is None else suppression,
            "metric": values["metric"] or "loss",
            "algorithm": values["algorithm"] or "optimal",
        }

    run = job(lambda q: own[q])
    api.validate_job(ds.table, run)  # refused here, not on the job's page
    written = job(lambda q: f"hierarchies/{q}.csv")
    header = f"# anonlab job; data: {ds.data_argument} {' '.join(ds.options)}\n"
    return run, header + yaml.safe_dump(written, sort_keys=False), sensitive


#: The hierarchy of a quasi-identifier that has none of its own.
AUTO = {"auto": {"grouping": "frequency"}}


def run(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on a bound socket until interrupted; the app's shutdown
    (its lifespan) removes what it wrote unless told to keep it."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
