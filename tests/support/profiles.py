"""Hypothesis settings for tests whose examples are costly (see tests/conftest.py).

The number of examples comes from the Hypothesis profile the run loads (``ci``: the whole
suite, ``dev``: the development loop). A test whose every example runs a search, an engine or
a brute-force oracle bounds it with :func:`costly`; the bound never raises the profile's
number, so the ``dev`` profile shrinks these tests too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings


def costly(examples: int, **options: Any) -> settings:
    """The loaded profile's settings with at most ``examples`` examples (and ``options``)."""
    return settings(max_examples=min(examples, settings.default.max_examples), **options)
