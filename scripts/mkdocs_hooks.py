"""mkdocs hook: the reST roles of anonlab's numpydoc docstrings read as code on the site.

The docstrings cross-reference with Sphinx roles (``:func:`open_engine```,
``:class:`~anonlab.models.base.ClassRule```), which mkdocstrings renders as they are written;
the API page shows the name as code instead (the last dotted part for a ``~`` reference).
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(
    r":(?:func|class|meth|attr|data|mod|obj|exc|ref|any|py:\w+):<code>(~?)([^<]*)</code>"
)


def _name(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Turn ``:role:<code>target</code>`` into ``<code>target</code>``."""
    return _ROLE.sub(_name, html)
