"""The web app on Starlette (the one module that imports the web framework and its server).

Routes: ``/`` (open a table), ``/open`` and ``/upload``, ``/d/{id}`` (a table's profile and
the question form), ``/d/{id}/ask`` (an answer), ``/d/{id}/job`` (the job editor; a POST
starts the job), ``/jobs/{id}`` (progress, then before and after) and
``/jobs/{id}/files/{release|job|report}`` (downloads).

Safety, in :class:`_Guard` and :class:`~anonlab.web.state.Workspace`: requests must name this
host (no DNS rebinding) and a form may only be posted from the app's own pages; request
bodies are bounded (the upload limit); every page forbids the browser to fetch anything from
elsewhere; errors are one line in the page, never a traceback; files are read and written
under the served folder only, inputs never overwritten.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import yaml
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartParser
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from anonlab import api
from anonlab.io.job import load_yaml, parse_job
from anonlab.report.html import cli_command
from anonlab.web import pages
from anonlab.web.state import Dataset, Workspace, guarded, one_line

__all__ = ["create_app", "run"]

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


class _TooLarge(api.InputError):
    """A request body above the limit (the page says so, with status 413)."""


class _Guard:
    """ASGI middleware: host and origin checks, body limits, security headers."""

    def __init__(self, app: Any, *, hosts: set[str], max_body: int) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = urlsplit("//" + headers.get("host", "")).hostname or ""
        if "*" not in self.hosts and host not in self.hosts:
            await _plain(send, 400, f"This app answers requests for {sorted(self.hosts)[0]} only.")
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


def create_app(root: str, *, max_upload: int = 100 * 2**20, host: str = "127.0.0.1") -> Any:
    """The app serving ``root``.

    Parameters
    ----------
    root : str
        The folder whose files the app may read and write under.
    max_upload : int
        The largest upload, in bytes.
    host : str
        The address the server listens on (requests must name it, or a loopback name).

    Returns
    -------
    starlette.applications.Starlette
    """
    ws = Workspace(root, max_upload)
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
            return _html(pages.home_page(ws, error=one_line(exc)), 400)
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
            return _html(pages.home_page(ws, error=one_line(exc)), status)
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
        }
        what = q.get("what", "question")

        def work() -> str:
            notes: list[str] = []
            try:
                with guarded(notes):
                    answer, args = _answer(ds, values, what)
            except Exception as exc:
                return pages.dataset_page(ds, values=values, error=one_line(exc), notes=notes)
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
            **{
                key: str(form.get(key, ""))
                for key in ("k", "l", "suppression", "metric", "algorithm", "yaml")
            },
        }
        try:
            job, text, sensitive = await run_in_threadpool(_job, ws, ds, values)
        except Exception as exc:
            page = pages.job_form_page(ds, api.job_choices(), values=values, error=one_line(exc))
            return _html(page, 400)
        run = ws.start_job(ds, job, text, sensitive)
        return RedirectResponse(f"/jobs/{run.id}", status_code=303)

    async def job_status(request: Request) -> Response:
        run = ws.jobs.get(request.path_params["id"])
        if run is None:
            raise HTTPException(404, "No such job.")
        return _html(await run_in_threadpool(pages.job_page, run))

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
            return _html(pages.error_page(one_line(exc)), 413)
        print(f"anonlab web: {one_line(exc)}", file=sys.stderr)
        return _html(pages.error_page(one_line(exc)), 500)

    routes = [
        Route("/", home),
        Route("/open", open_table, methods=["POST"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/d/{id}", show),
        Route("/d/{id}/ask", ask),
        Route("/d/{id}/job", job_form),
        Route("/d/{id}/job", start_job, methods=["POST"]),
        Route("/jobs/{id}", job_status),
        Route("/jobs/{id}/files/{kind}", download),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    hosts = {"127.0.0.1", "localhost", "::1", "testserver", host}
    if host in ("0.0.0.0", "::"):
        hosts.add("*")
    app.state.workspace = ws
    return _Guard(app, hosts=hosts, max_body=max_upload)


def _answer(ds: Dataset, values: dict[str, Any], what: str) -> tuple[Any, list[str]]:
    """Ask the API the question the form describes; the command line's options for it."""
    attrs = list(values["attr"])
    if not attrs:
        raise api.ParameterError("Choose at least one attribute.")
    k = _number(values["k"], "k", int)
    delta = _number(values["delta"], "δ", float)
    max_k = _number(values["max_k"], "max k", int)
    find = bool(values["find_delta"])
    joined = ",".join(attrs)
    if what in ("risk", "qis"):
        given = [n for n, v in (("k", k), ("δ", delta), ("max k", max_k)) if v is not None]
        if find:
            given.append("find the smallest δ")
        if given:
            raise api.ParameterError(
                f"{', '.join(given)} does not apply to this question; clear it."
            )
        if what == "risk":
            return api.risk(ds.engine, attrs), ["--qi", joined, "--risk"]
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
        header = f"# paths are relative to the served folder {ws.root}\n"
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
    others = [c for c in [*ds.table.names, *ds.table.nested] if c not in {*qis, *sensitive}]

    def job(hierarchy: Callable[[str], Any]) -> dict[str, Any]:
        return {
            "quasi_identifiers": {
                q: {"hierarchy": hierarchy(q)} if q in ds.hierarchies else {} for q in qis
            },
            "sensitive": sensitive,
            "identifiers": others,
            "models": models,
            "suppression": 0.0 if suppression is None else suppression,
            "metric": values["metric"] or "loss",
            "algorithm": values["algorithm"] or "optimal",
        }

    run = job(lambda q: ds.hierarchies[q])
    api.validate_job(ds.table, run)  # refused here, not on the job's page
    written = job(lambda q: f"hierarchies/{q}.csv")
    header = f"# anonlab job; data: {ds.data_argument} {' '.join(ds.options)}\n"
    return run, header + yaml.safe_dump(written, sort_keys=False), sensitive


def run(app: Any, *, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")
