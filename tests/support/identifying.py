"""The identifying-column check's rule, computed naively on rows (a test-only reference for
:func:`anonlab.diagnosis.risk.identifying_columns`), and a table that exercises it."""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anonlab import EncodedTable
from anonlab.diagnosis.risk import named_like_an_identifier

#: The columns of the bundled UCI Adult that identify people beside its usual
#: quasi-identifiers, as ``examples/adult_k5.yaml`` drops them: fnlwgt (47 % of the records
#: unique on it), education-num (a code of education) and capital-gain (with
#: hours-per-week, 1.47 %).
ADULT_IDENTIFYING = ["fnlwgt", "education-num", "capital-gain"]
#: The reasons' kinds, as :func:`kind` reads them off a reason.
KINDS = ("unique", "named", "determines", "determined", "pair")


def kind(reason: str) -> str:
    """The kind of an identifying-column reason (one of :data:`KINDS`)."""
    if "unique on it" in reason or "different value in each" in reason:
        return "unique"
    if reason.startswith("its name says"):
        return "named"
    if reason.startswith("it determines"):
        return "determines"
    if reason.startswith("quasi-identifier"):
        return "determined"
    assert reason.startswith("together with"), reason
    return "pair"


def figure(reason: str) -> int | None:
    """The records a reason counts: unique ones (``(15,330)``), or the exceptions of a
    dependency (``but for 3 records``; 0 when it holds exactly); None for a name."""
    k = kind(reason)
    if k == "named":
        return None
    if k in ("determines", "determined"):
        found = re.search(r"but for ([\d,]+) records", reason)
        return int(found.group(1).replace(",", "")) if found else 0
    if "different value in each of the" in reason:
        return int(re.search(r"each of the ([\d,]+)", reason).group(1).replace(",", ""))
    return int(re.search(r"records \(([\d,]+)\)", reason).group(1).replace(",", ""))


def summary(found: Sequence[tuple[str, str]]) -> list[tuple[str, str, int | None]]:
    """``(column, kind, figure)`` of each reported column."""
    return [(c, kind(r), figure(r)) for c, r in found]


def _errors(pairs: Counter[tuple[Any, Any]]) -> tuple[int, int]:
    """Predicting the second of each pair from the first, on the records whose first
    value another record shares: the records it gets wrong and those a guess of the
    second's most common value gets wrong."""
    by_first: dict[Any, Counter[Any]] = defaultdict(Counter)
    for (a, b), w in pairs.items():
        by_first[a][b] += w
    shared = {a: c for a, c in by_first.items() if sum(c.values()) >= 2}
    total = sum(sum(c.values()) for c in shared.values())
    if not total:
        return 0, 0
    errors = sum(sum(c.values()) - max(c.values()) for c in shared.values())
    second: Counter[Any] = Counter()
    for c in shared.values():
        second.update(c)
    return errors, total - max(second.values())


def _determines(pairs: Counter[tuple[Any, Any]], tolerance: float, cap: int) -> int | None:
    errors, guess = _errors(pairs)
    if guess == 0 or errors > tolerance * guess or errors > cap:
        return None
    return errors


def reference(
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    *,
    declared: Sequence[str] = (),
    quasi_identifiers: Sequence[str] = (),
    insensitive: Sequence[str] = (),
    top_levels: dict[str, int] | None = None,
    threshold: float = 0.01,
    tolerance: float = 0.01,
    cap: int = 1_000,
) -> list[tuple[str, str, int | None]]:
    """:func:`summary` of what ``identifying_columns`` reports, from the rule alone.

    ``top_levels`` gives a quasi-identifier's coarsest allowed level: 0 (its values) or,
    when missing, one value (a single root takes the nulls too).
    """
    n = len(rows)
    col = {c: [r[j] for r in rows] for j, c in enumerate(columns)}
    qis = list(quasi_identifiers)
    released = [c for c in insensitive if c not in qis]
    skip = {*declared, *qis, *released}
    undeclared = [c for c in columns if c not in skip]
    if n <= 1:
        return [(c, "named", None) for c in undeclared if named_like_an_identifier(c)]
    limit = threshold * n

    def unique(*names: str) -> int:
        counts = Counter(zip(*(col[c] for c in names)))
        return sum(1 for v in counts.values() if v == 1)

    found: dict[str, tuple[str, int | None]] = {}
    for c in undeclared:
        u = unique(c)
        if len(set(col[c])) == n or u > limit:
            found[c] = ("unique", u)
        elif named_like_an_identifier(c):
            found[c] = ("named", None)
    flat = [c for c in undeclared if c not in found]
    for c in flat:
        for q in qis:
            if len(set(col[c])) < 2 or len(set(col[q])) < 2:
                continue
            top = (top_levels or {}).get(q)
            coarse = col[q] if top == 0 else [0] * n
            if _determines(Counter(zip(coarse, col[c])), tolerance, cap) is not None:
                continue
            forward = _determines(Counter(zip(col[c], col[q])), tolerance, cap)
            if forward is not None:
                found[c] = ("determines", forward)
                break
            backward = _determines(Counter(zip(col[q], col[c])), tolerance, cap)
            if backward is not None:
                found[c] = ("determined", backward)
                break
    partners = [c for c in released if len(set(col[c])) < n and unique(c) <= limit]
    rest = [c for c in flat if c not in found]
    for i, a in enumerate(rest):
        hits = [unique(a, b) for b in [*rest[i + 1 :], *partners]]
        hits = [u for u in hits if u > limit]
        if hits:
            found[a] = ("pair", max(hits))
    return [(c, *found[c]) for c in undeclared if c in found]


def people_table(n: int = 2000) -> EncodedTable:
    """``n`` records drawn at random (seeded): quasi-identifiers ``age`` (40 values) and
    ``edu`` (8 levels); ``edu_num`` one number per level; ``band`` the decade of ``age``;
    ``hours`` (20 values) and ``gain`` (100) unique together for about a third of the
    records; ``weight`` unique for a tenth of them; ``wage`` (2 values) free. With
    ``quasi_identifiers=["age", "edu"]`` the check reports :data:`PEOPLE_FOUND`."""
    rng = np.random.default_rng(0)
    levels = ["pre", "hs", "some", "assoc", "bach", "mast", "prof", "doc"]
    age = rng.integers(20, 60, n)
    edu = rng.integers(0, 8, n)
    hours, gain, wage = rng.integers(0, 20, n), rng.integers(0, 100, n), rng.integers(0, 2, n)
    weight = np.where(np.arange(n) % 10 == 0, np.arange(n), 10_000 + rng.integers(0, 7, n))
    rows = [
        (str(a), levels[e], str(e + 1), f"{a // 10 * 10}s", str(h), str(g), str(w), str(v))
        for a, e, h, g, w, v in zip(age, edu, hours, gain, weight, wage)
    ]
    names = ["age", "edu", "edu_num", "band", "hours", "gain", "weight", "wage"]
    return EncodedTable.from_rows(rows, names)


#: What the check reports of :func:`people_table` with quasi-identifiers age and edu.
PEOPLE_FOUND = [
    ("edu_num", "it determines quasi-identifier 'edu' (8 values -> 8 values)"),
    (
        "band",
        "quasi-identifier 'age' determines it (40 values -> 4 values), and it tells more of "
        "'age' than 'age' generalized to one value",
    ),
    (
        "hours",
        "together with 'gain' it makes 36.4 % of the 2,000 records (728) unique (threshold 1 %)",
    ),
    ("weight", "10.0 % of the 2,000 records (200) are unique on it (threshold 1 %)"),
]


def write_csv(path: Path, table: EncodedTable) -> Path:
    """``table`` as a CSV file with a header (a null as an empty field)."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(table.names)
        cols = [table.column(c) for c in table.names]
        for i in range(table.n_rows):
            w.writerow(["" if (v := c.categories[c.codes[i]]) is None else v for c in cols])
    return path


#: The other columns of Adult under a job on age, sex and race with income sensitive: released
#: as they are (insensitive) or dropped (the two that identify).
ADULT_AGE_SEX_RACE_ROLES = {
    "sensitive": ["income"],
    "insensitive": [
        "workclass", "education", "marital-status", "occupation", "relationship",
        "capital-gain", "capital-loss", "hours-per-week", "native-country",
    ],
    "identifiers": ["fnlwgt", "education-num"],
}  # fmt: skip
