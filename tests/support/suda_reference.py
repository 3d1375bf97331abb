"""Brute-force minimal sample uniques and SUDA / DIS scores (the reference of
:func:`anonlab.diagnosis.suda.suda2` in tests).

Every record, every non-empty attribute subset of at most ``m`` attributes: the subset is an
MSU of the record when the record's values on it are held by no other record and every
non-empty proper subset's values are held by another. Plain Python over tuples of values,
written from the definitions (Manning, Haglin & Keane 2008, section 2; Elliot et al.'s
score; sdcMicro's DIS formula with ``U / D - U``), not from the production code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True)
class ReferenceSuda:
    """Per record: its MSUs (attribute index tuples), SUDA score, DIS score."""

    msus: list[list[tuple[int, ...]]]
    scores: list[float]
    dis_scores: list[float]


def reference_suda(
    rows: Sequence[Sequence[Hashable]], m: int, dis_fraction: float = 0.01
) -> ReferenceSuda:
    """MSUs of at most ``m`` attributes, and scores, of the records ``rows``."""
    n = len(rows)
    n_att = len(rows[0])
    counts: dict[tuple[int, ...], Counter[tuple[Hashable, ...]]] = {}
    for k in range(1, n_att + 1):
        for subset in combinations(range(n_att), k):
            counts[subset] = Counter(tuple(r[j] for j in subset) for r in rows)

    def unique(r: Sequence[Hashable], subset: tuple[int, ...]) -> bool:
        return counts[subset][tuple(r[j] for j in subset)] == 1

    msus: list[list[tuple[int, ...]]] = []
    for r in rows:
        own = []
        for k in range(1, m + 1):
            for subset in combinations(range(n_att), k):
                if not unique(r, subset):
                    continue
                proper = (s for size in range(1, k) for s in combinations(subset, size))
                if not any(unique(r, s) for s in proper):
                    own.append(subset)
        msus.append(own)

    def weight(k: int) -> float:
        w = 1
        for i in range(k, m):
            w *= n_att - i
        return float(w)

    scores = [sum(weight(len(s)) for s in own) for own in msus]
    full = Counter(tuple(r) for r in rows)
    uniques = sum(1 for r in rows if full[tuple(r)] == 1)
    pairs = sum(1 for r in rows if full[tuple(r)] == 2)
    dis = [0.0] * n
    if any(s > 0 for s in scores):
        f = dis_fraction
        file_dis = uniques * f / (uniques * f + pairs * (1 - f))
        q = 1 + (8 - n_att) / 20
        adjust = sum(s**-q for s in scores if s > 0)
        for i, s in enumerate(scores):
            if s > 0:
                dis[i] = 1 / (1 + (uniques / file_dis - uniques) / (s**q * adjust))
    return ReferenceSuda(msus, scores, dis)
