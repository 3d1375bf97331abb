"""The Diagnosis Centre in the browser: ``anonlab serve`` (needs ``pip install 'anonlab[web]'``).

A local web app: open a CSV or Parquet file (an upload, or a path under the folder given at
start) or the bundled Adult data, pick quasi-identifiers and sensitive attributes, ask the
twelve questions and see the answers with the report's figures, edit and run an anonymization
job and follow its progress, compare before and after, download the released table, its job
file and the report. It imports only :mod:`anonlab.api`, :mod:`anonlab.io` and
:mod:`anonlab.report` of anonlab; the web framework (Starlette, served by uvicorn) only in
:mod:`anonlab.web.app`.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from typing import Any

from anonlab._optional import import_optional

__all__ = ["create_app", "is_loopback", "serve"]


def _require() -> None:
    for name in ("starlette", "uvicorn", "python_multipart"):
        import_optional(name, feature="the web app")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def create_app(
    root: str | os.PathLike[str], *, max_upload: int = 100 * 2**20, host: str = "127.0.0.1"
) -> Any:
    """The ASGI app serving ``root`` (see :func:`anonlab.web.app.create_app`).

    Parameters
    ----------
    root : path
        The folder whose files the app may read and write under.
    max_upload : int
        The largest upload, in bytes.
    host : str
        The address the server listens on.

    Returns
    -------
    ASGI application
    """
    _require()
    from anonlab.web import app

    return app.create_app(str(root), max_upload=max_upload, host=host)


def serve(
    *,
    root: str | os.PathLike[str] = ".",
    host: str = "127.0.0.1",
    port: int = 8000,
    max_upload: int = 100 * 2**20,
) -> None:
    """Serve the app until interrupted; warn when it listens beyond this machine.

    Parameters
    ----------
    root : path
        The folder whose files the app may read and write under (nothing outside it).
    host : str
        Address to listen on: loopback by default.
    port : int
        Port to listen on.
    max_upload : int
        The largest upload, in bytes.
    """
    application = create_app(root, max_upload=max_upload, host=host)
    if not is_loopback(host):
        print(
            f"warning: listening on {host}, not only on this machine: anyone who can reach "
            f"port {port} can read the tables under {os.path.abspath(root)} and run jobs.",
            file=sys.stderr,
        )
    shown = f"[{host}]" if ":" in host else host
    print(
        f"anonlab: serving {os.path.abspath(root)} at http://{shown}:{port}/ (Ctrl-C stops it)",
        flush=True,
    )
    from anonlab.web import app

    app.run(application, host=host, port=port)
