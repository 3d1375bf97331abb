"""What the web tests compare the app with: the job its form builds for the bundled Adult."""

from __future__ import annotations

from typing import Any

import anonlab


def adult_k5_job(table: anonlab.EncodedTable) -> dict[str, Any]:
    """The job the app's form runs on Adult with k = 5, 5 % suppression and the loss metric
    (the other columns dropped, as the form drops them)."""
    hierarchies = anonlab.adult_hierarchies(table)
    return {
        "quasi_identifiers": {q: {"hierarchy": h} for q, h in hierarchies.items()},
        "sensitive": ["income"],
        "identifiers": [c for c in table.names if c not in {*hierarchies, "income"}],
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression": 0.05,
        "metric": "loss",
    }
