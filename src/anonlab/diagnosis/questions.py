"""The twelve questions of the k-anonymity Diagnosis Centre over (k, S, delta).

Zare Mirakabad, Jantan & Bressan, *k-anonymity Diagnosis Centre*, section 4.1. What the user
gives decides the question, as in the paper:

======  =====  =====  ======  ============================================
S       k      delta  find    question
======  =====  =====  ======  ============================================
yes     yes    -      -       Q1  is r k-anonymous w.r.t. S?
yes     -      -      -       Q2  for which k?
-       yes    -      -       Q3  for which S? (largest subsets, Algorithm 2)
-       -      -      -       Q4  k for every S (Algorithm 3)
yes     yes    yes    -       Q5  is delta-suppressed r k-anonymous?
yes     -      yes    -       Q6  for which k after delta-suppression? (Algorithm 4)
-       yes    yes    -       Q7  for which S after delta-suppression?
-       -      yes    -       Q8  k for every S after delta-suppression
yes     yes    -      yes     Q9  smallest delta for k
-       yes    -      yes     Q10 smallest delta for k, for every S
yes     -      -      yes     Q11 smallest delta for k = 1..max_k
-       -      -      yes     Q12 smallest delta for every S and k = 1..max_k
======  =====  =====  ======  ============================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonlab._html import html_card
from anonlab._progress import Progress
from anonlab._validation import check_fraction, check_int
from anonlab.diagnosis.subsets import (
    Subset,
    SubsetEvaluator,
    all_subsets,
    check_subset_space,
    count_subsets,
    largest_subsets,
)
from anonlab.diagnosis.suppression import (
    compute_k,
    delta_curve,
    delta_for_k,
    k_with_suppression,
    suppression_budget,
)
from anonlab.engines.base import AttributeLevels, Engine
from anonlab.exceptions import ParameterError

__all__ = ["ask", "question_for", "SubsetAnswer", "SearchAnswer", "TableAnswer", "TableRow"]

#: Default largest k of the tables of Q11 and Q12 (the paper's Figure 8 goes to 50).
DEFAULT_MAX_K = 50

#: Each question in words (the titles of the answers' HTML tables).
QUESTION_TITLES = {
    "Q1": "is the table k-anonymous w.r.t. S?",
    "Q2": "for which k is the table k-anonymous w.r.t. S?",
    "Q3": "which largest sets S keep the table k-anonymous?",
    "Q4": "the k of every set S",
    "Q5": "is the table k-anonymous after delta-suppression?",
    "Q6": "for which k after delta-suppression?",
    "Q7": "which largest sets S are k-anonymous after delta-suppression?",
    "Q8": "the k of every set S after delta-suppression",
    "Q9": "the smallest delta for k",
    "Q10": "the smallest delta for k, for every set S",
    "Q11": "the smallest delta for k = 1 .. max_k",
    "Q12": "the smallest delta for every set S and k = 1 .. max_k",
}


def _title(question: str) -> str:
    return f"{question}: {QUESTION_TITLES.get(question, '')}"


@dataclass
class SubsetAnswer:
    """Answer about one attribute subset S (Q1, Q2, Q5, Q6, Q9).

    Attributes
    ----------
    question : str
    quasi_identifiers : list of str
    k : int
        Q1, Q2, Q5, Q6: the k of the (suppressed) table. Q9: the k asked for.
    delta : float
        Q5, Q6: the suppression threshold given. Q9: the smallest threshold found.
    suppressed_rows : int
        Rows removed (never more than ``floor(delta * n)``).
    n_rows : int
    answer : bool, optional
        Q1 and Q5: whether the table is at least ``required_k``-anonymous.
    required_k : int, optional
        The k given (Q1, Q5).
    achieved_k : int, optional
        Q9: the k of the table after the suppression.
    suppressed_row_positions : list of int, optional
        The rows suppressed (positions), when asked for.
    levels : dict, optional
        Hierarchy levels the question was asked at.
    suppression_budget : int, optional
        Q5, Q6: the most rows delta lets go, ``floor(delta * n)``.
    smallest_class_rows : int, optional
        Q5, Q6: the rows of the classes of size k after the suppression (all of them would
        have to go to raise k).

    Examples
    --------
    >>> from anonlab import EncodedTable, diagnose
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> answer = diagnose(t, quasi_identifiers=["zip", "sex"], k=2)
    >>> answer.question, answer.answer, answer.k
    ('Q1', False, 1)
    """

    question: str
    quasi_identifiers: list[str]
    k: int
    delta: float
    suppressed_rows: int
    n_rows: int
    answer: bool | None = None
    required_k: int | None = None
    achieved_k: int | None = None
    suppressed_row_positions: list[int] | None = None
    levels: dict[str, int] = field(default_factory=dict)
    suppression_budget: int | None = None
    smallest_class_rows: int | None = None

    def _repr_html_(self) -> str:
        """The answer as a table with each figure's meaning (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable, diagnose
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
        >>> "No: the table is 1-anonymous" in diagnose(t, quasi_identifiers=["zip"], k=2)._repr_html_()
        True
        """
        qis = ", ".join(self.quasi_identifiers)
        after = (
            f" after suppressing {self.suppressed_rows:,} of {self.n_rows:,} rows"
            if self.suppressed_rows
            else ""
        )
        k = self.achieved_k if self.achieved_k is not None else self.k
        if self.answer is not None:
            verdict = "Yes" if self.answer else "No"
            headline = f"{verdict}: the table is {k}-anonymous w.r.t. {qis}{after} ({self.required_k} asked for)."
        else:
            headline = f"The table is {k}-anonymous w.r.t. {qis}{after}."
        return html_card(_title(self.question), self.to_dict(), headline=headline)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form documented in docs/guide/diagnose.md.

        Examples
        --------
        >>> from anonlab import EncodedTable, diagnose
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
        >>> d = diagnose(t, quasi_identifiers=["zip"], k=2).to_dict()
        >>> d["question"], d["answer"], d["k"]
        ('Q1', False, 1)
        """
        out: dict[str, Any] = {
            "question": self.question,
            "quasi_identifiers": self.quasi_identifiers,
            "k": self.k,
            "delta": self.delta,
            "suppressed_rows": self.suppressed_rows,
            "n_rows": self.n_rows,
        }
        for name in (
            "answer",
            "required_k",
            "achieved_k",
            "suppressed_row_positions",
            "suppression_budget",
            "smallest_class_rows",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.levels:
            out["levels"] = self.levels
        return out


@dataclass
class SearchAnswer:
    """Answer of a subset search (Q3, Q7): the largest subsets that are k-anonymous.

    ``constant_columns`` are the candidates that hold one value in every row.

    Examples
    --------
    >>> from anonlab import EncodedTable, diagnose
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "M"]})
    >>> answer = diagnose(t, attributes=["zip", "sex"], k=2)
    >>> answer.question, answer.subsets
    ('Q3', [['zip'], ['sex']])
    """

    question: str
    k: int
    delta: float
    subsets: list[list[str]]
    evaluations: int
    attributes: list[str]
    levels: dict[str, int] = field(default_factory=dict)
    constant_columns: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """The answer as a table of the subsets found (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable, diagnose
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4351"] * 2, "sex": ["F", "F", "M", "M"]})
        >>> "<td>zip</td>" in diagnose(t, attributes=["zip", "sex"], k=2)._repr_html_()
        True
        """
        data = self.to_dict()
        data["subsets"] = [{"set": ", ".join(s), "size": len(s)} for s in self.subsets]
        headline = (
            f"{len(self.subsets):,} largest sets of the {len(self.attributes)} attributes "
            f"keep the table {self.k}-anonymous"
            + (f" with delta {self.delta:.4g}" if self.delta else "")
            + f" ({self.evaluations:,} sets evaluated)."
        )
        return html_card(_title(self.question), data, headline=headline)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form documented in docs/guide/diagnose.md."""
        out: dict[str, Any] = {
            "question": self.question,
            "k": self.k,
            "delta": self.delta,
            "subsets": self.subsets,
            "evaluations": self.evaluations,
            "attributes": self.attributes,
        }
        if self.levels:
            out["levels"] = self.levels
        if self.constant_columns:
            out["constant_columns"] = self.constant_columns
        return out


@dataclass
class TableRow:
    """One row of a diagnosis table.

    ``evaluated`` is False for a subset whose classes were not computed: it contains a
    subset that already fails (k = 1 in Q4 and Q8; every row suppressed in Q10; every
    record unique in Q12), so by Lemma 1 its answer is that subset's.

    Examples
    --------
    >>> TableRow(["zip", "sex"], k=2, delta=0.0, suppressed_rows=0).to_dict()
    {'attributes': ['zip', 'sex'], 'k': 2, 'delta': 0.0, 'suppressed_rows': 0, 'evaluated': True}
    """

    attributes: list[str]
    k: int
    delta: float
    suppressed_rows: int
    evaluated: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form of the row."""
        return {
            "attributes": self.attributes,
            "k": self.k,
            "delta": self.delta,
            "suppressed_rows": self.suppressed_rows,
            "evaluated": self.evaluated,
        }


@dataclass
class TableAnswer:
    """Answer of a table question (Q4, Q8, Q10, Q11, Q12).

    In Q4 and Q8 ``k`` is the k of each subset; in Q10, Q11 and Q12 it is the k asked for and
    ``delta`` the smallest suppression threshold that reaches it. ``constant_columns`` are
    the candidates that hold one value in every row.

    Examples
    --------
    >>> from anonlab import EncodedTable, diagnose
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> answer = diagnose(t, attributes=["zip", "sex"])
    >>> answer.question, [(row.attributes, row.k) for row in answer.rows]
    ('Q4', [(['zip'], 1), (['sex'], 1), (['zip', 'sex'], 1)])
    """

    question: str
    rows: list[TableRow]
    evaluations: int
    n_rows: int
    k: int | None = None
    delta: float | None = None
    levels: dict[str, int] = field(default_factory=dict)
    constant_columns: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """The answer's table, one row per set (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable, diagnose
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
        >>> "<td>zip, sex</td>" in diagnose(t, attributes=["zip", "sex"])._repr_html_()
        True
        """
        data = self.to_dict()
        data["rows"] = [{**r, "attributes": ", ".join(r["attributes"])} for r in data["rows"]]
        headline = f"{len(self.rows):,} rows over {self.n_rows:,} records ({self.evaluations:,} sets evaluated)."
        return html_card(_title(self.question), data, headline=headline)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form documented in docs/guide/diagnose.md."""
        out: dict[str, Any] = {
            "question": self.question,
            "rows": [r.to_dict() for r in self.rows],
            "evaluations": self.evaluations,
            "n_rows": self.n_rows,
        }
        if self.k is not None:
            out["k"] = self.k
        if self.delta is not None:
            out["delta"] = self.delta
        if self.levels:
            out["levels"] = self.levels
        if self.constant_columns:
            out["constant_columns"] = self.constant_columns
        return out


Answer = SubsetAnswer | SearchAnswer | TableAnswer


def question_for(
    quasi_identifiers: Sequence[str] | None,
    k: int | None,
    delta: float | None,
    find_delta: bool,
) -> str:
    """Return the question (``"Q1"`` .. ``"Q12"``) decided by what is given.

    Examples
    --------
    >>> question_for(["zip", "sex"], k=None, delta=None, find_delta=False)
    'Q2'
    >>> question_for(None, k=5, delta=None, find_delta=False)
    'Q3'
    """
    s, kk = quasi_identifiers is not None, k is not None
    if find_delta:
        if delta is not None:
            raise ParameterError("Give either 'delta' or 'find_delta', not both.")
        return {
            (True, True): "Q9",
            (False, True): "Q10",
            (True, False): "Q11",
            (False, False): "Q12",
        }[(s, kk)]
    if delta is None:
        return {(True, True): "Q1", (True, False): "Q2", (False, True): "Q3", (False, False): "Q4"}[
            (s, kk)
        ]
    return {(True, True): "Q5", (True, False): "Q6", (False, True): "Q7", (False, False): "Q8"}[
        (s, kk)
    ]


def ask(
    engine: Engine,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    attributes: Sequence[str] | None = None,
    k: int | None = None,
    delta: float | None = None,
    find_delta: bool = False,
    max_k: int | None = None,
    levels: AttributeLevels | None = None,
    list_rows: bool = False,
    progress: Progress | None = None,
    max_size: int | None = None,
) -> Answer:
    """Answer the diagnosis question decided by the parameters given.

    Parameters
    ----------
    engine : Engine
        Class statistics of the table.
    quasi_identifiers : sequence of str, optional
        The attribute set S. Without it, the question is about every subset of ``attributes``.
    attributes : sequence of str, optional
        Candidate attributes of subset questions (default: every column of the engine).
    k : int, optional
        Required k, ``1 <= k <= n``.
    delta : float, optional
        Suppression threshold in [0, 1]: at most ``floor(delta * n)`` rows may be removed.
    find_delta : bool
        Ask for the smallest delta (Q9-Q12).
    max_k : int, optional
        Largest k of the tables of Q11 and Q12 (default 50, at most n).
    levels : Mapping[str, int], optional
        Ask the question with attributes generalized to these hierarchy levels.
    list_rows : bool
        One-subset questions with suppression: also return the suppressed row positions.
    progress : callable, optional
        ``progress(advance, total)`` during subset searches.
    max_size : int, optional
        Subset questions: examine subsets of at most this many attributes. A table question
        over more subsets than anonlab lists (:data:`~anonlab.diagnosis.subsets.MAX_LISTED_SUBSETS`)
        is refused before any work, naming the numbers.

    Returns
    -------
    SubsetAnswer, SearchAnswer or TableAnswer

    References
    ----------
    Zare Mirakabad, M. R., Jantan, A., Bressan, S. *k-anonymity Diagnosis Centre*, section 4.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> engine = open_engine(EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]}))
    >>> answer = ask(engine, quasi_identifiers=["zip"])
    >>> answer.question, answer.k
    ('Q2', 1)
    """
    n = engine.require_rows("diagnose")
    if k is not None:
        k = check_int(k, "k", low=1, high=n)
    if delta is not None:
        delta = check_fraction(delta, "delta")
    if max_k is not None:
        max_k = check_int(max_k, "max_k", low=1, high=n)
    if max_size is not None:
        max_size = check_int(max_size, "max_size", low=1)
    question = question_for(quasi_identifiers, k, delta, find_delta)
    lv = dict(levels or {})
    if quasi_identifiers is not None:
        if max_size is not None:
            raise ParameterError(
                f"max_size bounds subset searches; {question} is about one attribute set S."
            )
        qi = list(quasi_identifiers)
        if not qi:
            raise ParameterError("The set of quasi-identifiers S is empty.")
        engine.validate(qi, {a: v for a, v in lv.items() if a in qi})
        used = {a: v for a, v in lv.items() if a in qi and v}
        return _one_subset(engine, question, qi, k, delta, max_k, used, list_rows)
    attrs = list(attributes) if attributes is not None else engine.attribute_columns
    if not attrs:
        raise ParameterError("No candidate attributes to search over.")
    engine.validate(attrs, {a: v for a, v in lv.items() if a in attrs})
    used = {a: v for a, v in lv.items() if a in attrs and v}
    evaluator = SubsetEvaluator(engine, used, progress)
    if question in ("Q3", "Q7"):
        assert k is not None
        kk, d = k, delta or 0.0

        def accept(sizes: np.ndarray) -> bool:
            return k_with_suppression(sizes, n, d)[0] >= kk if d else compute_k(sizes) >= kk

        subsets = largest_subsets(evaluator, attrs, accept, max_size)
        return SearchAnswer(
            question,
            kk,
            d,
            [list(s) for s in subsets],
            evaluator.evaluations,
            attrs,
            used,
            evaluator.constant,
        )
    top = min(max_k or DEFAULT_MAX_K, n) if question == "Q12" else 1
    check_subset_space(question, len(attrs), max_size, per_subset=top)
    table = _table(evaluator, question, attrs, k, delta, max_k, n, used, progress, max_size)
    table.constant_columns = evaluator.constant
    return table


def _one_subset(
    engine: Engine,
    question: str,
    qi: list[str],
    k: int | None,
    delta: float | None,
    max_k: int | None,
    levels: dict[str, int],
    list_rows: bool,
) -> Answer:
    n = engine.n_rows
    sizes = engine.class_sizes(qi, levels)
    if question == "Q11":
        top = min(max_k or DEFAULT_MAX_K, n)
        ks = np.arange(1, top + 1, dtype=np.int64)
        deltas, supp_k = delta_curve(sizes, n, ks)
        rows = [TableRow(qi, int(kk), float(d), int(s)) for kk, d, s in zip(ks, deltas, supp_k)]
        return TableAnswer(question, rows, 1, n, levels=levels)
    positions: list[int] | None = None
    if question in ("Q1", "Q2"):
        kk, d, supp = compute_k(sizes), 0.0, 0
        ans = SubsetAnswer(question, qi, kk, d, supp, n, levels=levels)
        if question == "Q1":
            assert k is not None
            ans.answer, ans.required_k = kk >= k, k
        return ans
    if question in ("Q5", "Q6"):
        assert delta is not None
        kk, supp = k_with_suppression(sizes, n, delta)
        ans = SubsetAnswer(question, qi, kk, delta, supp, n, levels=levels)
        ans.suppression_budget = suppression_budget(delta, n)
        ans.smallest_class_rows = int(sizes[sizes == kk].sum())
        if question == "Q5":
            assert k is not None
            ans.answer, ans.required_k = kk >= k, k
        small_below = kk
    else:  # Q9
        assert k is not None
        d, supp, achieved = delta_for_k(sizes, n, k)
        ans = SubsetAnswer(question, qi, k, d, supp, n, achieved_k=achieved, levels=levels)
        small_below = k
    if list_rows:
        positions = engine.rows_in_small_classes(qi, levels, small_below).tolist()
        ans.suppressed_row_positions = positions
    return ans


def _table(
    evaluator: SubsetEvaluator,
    question: str,
    attrs: list[str],
    k: int | None,
    delta: float | None,
    max_k: int | None,
    n: int,
    levels: dict[str, int],
    progress: Progress | None,
    max_size: int | None,
) -> TableAnswer:
    rows: list[TableRow] = []
    dead: set[Subset] = set()  # subsets whose supersets need no evaluation

    def pruned(subset: Subset) -> bool:
        # a-priori pruning (Lemma 1): a superset of a "dead" subset is dead too. Subsets come
        # level by level and dead pruned subsets are recorded, so checking the subsets one
        # smaller is enough.
        if len(subset) > 1 and any(
            subset[:j] + subset[j + 1 :] in dead for j in range(len(subset))
        ):
            dead.add(subset)
            return True
        return False

    total = count_subsets(len(attrs), max_size)
    evaluator.total = total
    if question in ("Q4", "Q8"):
        d = delta or 0.0
        for subset in all_subsets(attrs, max_size):
            if pruned(subset):
                rows.append(TableRow(list(subset), 1, d, 0, evaluated=False))
                if progress is not None:
                    progress(1, total)
                continue
            sizes = evaluator.sizes(subset)
            kk, supp = k_with_suppression(sizes, n, d) if d else (compute_k(sizes), 0)
            if kk <= 1:
                dead.add(subset)
            rows.append(TableRow(list(subset), kk, d, supp))
        return TableAnswer(question, rows, evaluator.evaluations, n, delta=delta, levels=levels)
    if question == "Q10":
        assert k is not None
        for subset in all_subsets(attrs, max_size):
            if pruned(subset):
                rows.append(TableRow(list(subset), k, 1.0, n, evaluated=False))
                if progress is not None:
                    progress(1, total)
                continue
            sizes = evaluator.sizes(subset)
            dd, supp, _ = delta_for_k(sizes, n, k)
            if supp == n:
                dead.add(subset)
            rows.append(TableRow(list(subset), k, dd, supp))
        return TableAnswer(question, rows, evaluator.evaluations, n, k=k, levels=levels)
    # Q12: every subset, k = 1..max_k
    top = min(max_k or DEFAULT_MAX_K, n)
    ks = np.arange(1, top + 1, dtype=np.int64)
    unique_deltas, unique_supp = delta_curve(np.ones(n, dtype=np.int64), n, ks)
    for subset in all_subsets(attrs, max_size):
        evaluated = not pruned(subset)
        if not evaluated:
            deltas, supps = unique_deltas, unique_supp
            if progress is not None:
                progress(1, total)
        else:
            sizes = evaluator.sizes(subset)
            if sizes.size == n:  # every record unique: so is every superset
                dead.add(subset)
            deltas, supps = delta_curve(sizes, n, ks)
        rows.extend(
            TableRow(list(subset), int(kk), float(dd), int(ss), evaluated)
            for kk, dd, ss in zip(ks.tolist(), deltas.tolist(), supps.tolist())
        )
    return TableAnswer(question, rows, evaluator.evaluations, n, levels=levels)
