"""The Diagnosis Centre in the browser: ``anonlab serve`` (needs ``pip install 'anonlab[web]'``).

A local web app: open a CSV or Parquet file (an upload, or a path under the folder given at
start) or the bundled Adult data, pick quasi-identifiers and sensitive attributes, ask the
twelve questions and see the answers with the report's figures, edit and run an anonymization
job and follow its progress, compare before and after, download the released table, its job
file and the report. It imports only :mod:`anonlab.api`, :mod:`anonlab.io` and
:mod:`anonlab.report` of anonlab; the web framework (Starlette, served by uvicorn) only in
:mod:`anonlab.web.app`.

It is safe on a shared machine: every request needs the access token printed at start (then
kept in a cookie), requests must name an allowed host, and what it writes is its owner's only
and removed when it stops (unless kept).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import socket
import sys
from collections.abc import Iterable
from typing import Any

from anonlab._optional import import_optional

__all__ = ["create_app", "is_loopback", "serve"]


def _require() -> None:
    for name in ("starlette", "uvicorn", "python_multipart"):
        import_optional(name, feature="the web app")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost).

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("0.0.0.0")
    (True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def create_app(
    root: str | os.PathLike[str],
    *,
    token: str | None,
    max_upload: int = 100 * 2**20,
    host: str = "127.0.0.1",
    allow_hosts: Iterable[str] = (),
    keep_outputs: bool = False,
) -> Any:
    """The ASGI app serving ``root`` (see :func:`anonlab.web.app.create_app`).

    Parameters
    ----------
    root : path
        The folder whose files the app may read and write under.
    token : str or None
        The access token every request must carry (None: no token, loopback hosts only).
    max_upload : int
        The largest upload, in bytes (also once decompressed).
    host : str
        The address the server listens on.
    allow_hosts : iterable of str
        Host names requests may name besides this machine's and ``host``.
    keep_outputs : bool
        Keep uploads and outputs when the app stops.

    Returns
    -------
    ASGI application
    """
    _require()
    from anonlab.web import app

    return app.create_app(
        str(root),
        token=token,
        max_upload=max_upload,
        host=host,
        allow_hosts=list(allow_hosts),
        keep_outputs=keep_outputs,
    )


def serve(
    *,
    root: str | os.PathLike[str] = ".",
    host: str = "127.0.0.1",
    port: int = 8000,
    max_upload: int = 100 * 2**20,
    token: str | bool = True,
    allow_hosts: Iterable[str] = (),
    keep_outputs: bool = False,
) -> None:
    """Serve the app until interrupted; print its address (with the token) once it listens.

    Parameters
    ----------
    root : path
        The folder whose files the app may read and write under (nothing outside it).
    host : str
        Address to listen on: loopback by default; another needs a token.
    port : int
        Port to listen on, 0 to 65535 (0: a free one, printed).
    max_upload : int
        The largest upload, in bytes (also once decompressed).
    token : str or bool
        True: a random access token; a string: that token (16 or more characters); False:
        none (loopback only).
    allow_hosts : iterable of str
        Host names requests may name besides this machine's and ``host``.
    keep_outputs : bool
        Keep uploads and outputs when the app stops (by default they are removed).

    Raises
    ------
    ParameterError
        A port out of range, no token beyond loopback, a bad token or host name.
    InputError
        The port is taken or cannot be used; nothing is served then.
    """
    from anonlab import api

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise api.ParameterError(
            f"The port must be a whole number from 0 to 65535 (0: a free one); got {port}."
        )
    key = secrets.token_urlsafe(32) if token is True else None if token is False else token
    application = create_app(
        root,
        token=key,
        max_upload=max_upload,
        host=host,
        allow_hosts=allow_hosts,
        keep_outputs=keep_outputs,
    )
    sock = _bind(host, port)
    try:
        bound = int(sock.getsockname()[1])
        if not is_loopback(host):
            print(
                f"warning: listening on {host}, not only on this machine: anyone who can reach "
                f"port {bound} and has the token can read the tables under "
                f"{os.path.abspath(root)} and run jobs, over plain HTTP (not encrypted). "
                "Requests must name this machine as 127.0.0.1, localhost or a name given "
                "with --allow-host.",
                file=sys.stderr,
            )
        shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
        shown = f"[{shown}]" if ":" in shown and not shown.startswith("[") else shown
        address = f"http://{shown}:{bound}/" + (f"?token={key}" if key else "")
        kept = "kept" if keep_outputs else "removed when it stops; --keep-outputs keeps them"
        print(
            f"anonlab: serving {os.path.abspath(root)} at {address} (Ctrl-C stops it)\n"
            f"anonlab: uploads and outputs are {kept}.",
            flush=True,
        )
        from anonlab.web import app

        app.run(application, sock)
    finally:
        sock.close()
        application.workspace.close()  # the app's shutdown did it, unless it never started


def _bind(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``, or one clear error."""
    from anonlab import api

    try:
        found = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise api.InputError(f"Cannot listen on {host!r}: {reason}.") from None
    found.sort(key=lambda info: info[0] != socket.AF_INET)  # 127.0.0.1 before ::1
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise api.InputError(
                f"Port {port} on {host} is in use by another program; choose another with "
                "--port, or --port 0 for a free one."
            ) from None
        raise api.InputError(
            f"Cannot listen on {host} port {port}: {exc.strerror or exc}."
        ) from None
    return sock
