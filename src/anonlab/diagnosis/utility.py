"""Utility in a steward's terms: what a release keeps of each attribute, and of their links.

A loss number (entropy 232835, GCP 0.27) does not say what a release is still good for.
:func:`utility_profile` says it per attribute and in words: the share of its cells generalized
and suppressed, its distribution before and after, how much of a sensitive attribute's
distribution the released rows keep (one minus the total variation distance), the association
between attributes before and after (Cramér's V, as ARX's GUI compares contingency tables),
one contingency table of two attributes the user picks, and a plain-language summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.table import EncodedTable
from anonlab.exceptions import ColumnNotFoundError, ParameterError
from anonlab.release import AnonymizationResult

__all__ = [
    "AttributeUtility",
    "ClassificationUtility",
    "UtilityProfile",
    "check_target",
    "classification_utility",
    "utility_profile",
]

#: How many values (or labels) of an attribute a distribution lists; the rest are summed.
SHOWN_VALUES = 12


@dataclass(frozen=True)
class AttributeUtility:
    """What a release keeps of one attribute.

    Attributes
    ----------
    attribute : str
    quasi_identifier : bool
        Whether the release generalizes it (else it is released as it is, on the kept rows).
    generalized : float
        Share of the records whose released cell is not their value (a label above it).
    suppressed : float
        Share of the records whose cell is not released (a suppressed row, or ``*``).
    level, height : int or None
        The level released and the hierarchy's height (a full-domain release).
    kept_distribution : float
        One minus the total variation distance between the values' distribution in the data
        and the released cells' (1: the same shares); a generalized attribute compares its
        labels on every row with those released (what suppression changed of them).
    before, after : list of (str, int)
        The most frequent values in the data and labels in the release, with their counts
        (the rest summed as ``"(other)"``).

    Examples
    --------
    >>> a = AttributeUtility("age", True, 0.5, 0.1, 1, 3, 0.0, [("30", 2)], [("[30, 40)", 2)])
    >>> a.fully_generalized, a.sentence()
    (False, 'age: 50.0% of the cells generalized, 10.0% suppressed (level 1 of 3)')
    """

    attribute: str
    quasi_identifier: bool
    generalized: float
    suppressed: float
    level: int | None
    height: int | None
    kept_distribution: float
    before: list[tuple[str, int]] = field(default_factory=list)
    after: list[tuple[str, int]] = field(default_factory=list)

    @property
    def fully_generalized(self) -> bool:
        """Whether the attribute is released at its top level (nothing left of it)."""
        return self.level is not None and self.height is not None and self.level >= self.height

    def sentence(self) -> str:
        """What the release keeps of it, in words."""
        if not self.quasi_identifier:
            return (
                f"{self.attribute}: released as it is on the kept rows; keeps "
                f"{self.kept_distribution:.1%} of its distribution"
            )
        level = f" (level {self.level} of {self.height})" if self.level is not None else ""
        return (
            f"{self.attribute}: {self.generalized:.1%} of the cells generalized, "
            f"{self.suppressed:.1%} suppressed{level}"
        )


@dataclass(frozen=True)
class UtilityProfile:
    """What a release keeps, per attribute, of their associations, and in one paragraph.

    Attributes
    ----------
    attributes : list of AttributeUtility
    associations : list of dict
        Per pair of attributes: ``pair``, ``before`` and ``after`` (Cramér's V, 0: unrelated,
        1: one determines the other), on the data's rows and on the released ones.
    contingency : dict or None
        The pair asked for: ``pair``, ``rows``, ``columns``, ``before`` and ``after`` (counts,
        the most frequent values and labels of each).
    summary : str
        The plain-language summary (``"2 of 6 attributes are fully generalized; ..."``).

    Examples
    --------
    >>> UtilityProfile([], [], None, "nothing").summary
    'nothing'
    """

    attributes: list[AttributeUtility]
    associations: list[dict[str, Any]]
    contingency: dict[str, Any] | None
    summary: str


def utility_profile(
    table: EncodedTable,
    result: AnonymizationResult,
    attributes: Sequence[str] = (),
    *,
    pair: Sequence[str] | None = None,
) -> UtilityProfile:
    """What ``result`` keeps of ``table``: per attribute, per pair, and in words.

    Parameters
    ----------
    table : EncodedTable
        The data the release was made from (the rows of ``result.problem``).
    result : AnonymizationResult
        A verified release made in memory.
    attributes : sequence of str
        Attributes released as they are to describe too (the sensitive ones); the
        quasi-identifiers always are.
    pair : sequence of two str, optional
        Two attributes whose contingency table to give before and after.

    Returns
    -------
    UtilityProfile

    Raises
    ------
    ParameterError
        A block run's release (its rows are in its output file), or ``pair`` not two names.
    ColumnNotFoundError
        An attribute or a pair's column the release does not hold.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> profile = utility_profile(t, anonlab.anonymize(t, job), ["disease"])
    >>> profile.summary
    '0 of 1 attribute is fully generalized; no row suppressed; disease keeps 100.0% of its distribution.'
    >>> profile.attributes[0].sentence()
    'zip: 100.0% of the cells generalized, 0.0% suppressed (level 1 of 4)'
    """
    if result.recoding is None:
        raise ParameterError("A per-partition release keeps its rows in the output file.")
    problem = result.problem
    qis = list(problem.quasi_identifiers)
    others = [a for a in dict.fromkeys(attributes) if a not in qis]
    released = result.recoding.apply(problem)
    for name in others:
        if name not in table.names:
            raise ColumnNotFoundError(f"Unknown attribute {name!r}: the data has no such column.")
    rows = (
        np.arange(table.n_rows)
        if result.recoding.rows is None
        else np.asarray(result.recoding.rows, dtype=np.int64)
    )
    gone = _suppressed_rows(result, len(rows))
    kept = rows[~gone]
    levels = result.transformation if result.forms_classes else {}
    heights = {q: problem.hierarchies[q].height for q in qis}
    n = table.n_rows
    per: list[AttributeUtility] = []
    for name in [*qis, *others]:
        original = table[name].labels()
        if name in qis:
            after = np.asarray(released[name].labels(), dtype=object)
            shown = after[~gone]
            same = shown == original[kept]
            hidden = int(np.count_nonzero(shown == "*")) + (n - len(kept))
            generalized = int(np.count_nonzero(~same & (shown != "*")))
            reference = after  # its labels on every row: what suppression changed of them
        else:
            shown, hidden, generalized = original[kept], n - len(kept), 0
            reference = original
        per.append(
            AttributeUtility(
                name,
                name in qis,
                generalized / n if n else 0.0,
                hidden / n if n else 0.0,
                levels.get(name),
                heights.get(name),
                _kept_share(reference, shown),
                _top(original),
                _top(shown),
            )
        )
    names = [*qis, *others]
    before_cols = {a: table[a].labels() for a in names}
    after_cols = {a: (np.asarray(released[a].labels(), dtype=object)[~gone] if a in qis
                      else table[a].labels()[kept]) for a in names}  # fmt: skip
    associations = [
        {
            "pair": [a, b],
            "before": _cramers_v(before_cols[a], before_cols[b]),
            "after": _cramers_v(after_cols[a], after_cols[b]),
        }
        for a, b in combinations(names, 2)
    ]
    contingency = None
    if pair is not None:
        if len(pair) != 2 or pair[0] == pair[1]:
            raise ParameterError(f"A contingency table needs two attributes. Got {list(pair)!r}.")
        for name in pair:
            if name not in before_cols:
                raise ColumnNotFoundError(
                    f"Unknown attribute {name!r} for the contingency table; choose among "
                    f"{', '.join(map(repr, names))}."
                )
        a, b = pair
        contingency = {
            "pair": [a, b],
            "before": _crosstab(before_cols[a], before_cols[b]),
            "after": _crosstab(after_cols[a], after_cols[b]),
        }
    return UtilityProfile(per, associations, contingency, _summary(per, n, n - len(kept)))


def _suppressed_rows(result: AnonymizationResult, n: int) -> npt.NDArray[np.bool_]:
    """Per row of the recoding, whether the verification suppressed it."""
    release = result.release
    row_class = release.classes.row_class
    if not result.forms_classes or row_class is None:
        return np.zeros(n, dtype=bool)
    return np.asarray(release.suppressed, dtype=bool)[np.asarray(row_class, dtype=np.int64)]


def _top(values: npt.NDArray[Any]) -> list[tuple[str, int]]:
    labels, counts = np.unique(np.asarray(values, dtype=str), return_counts=True)
    order = np.argsort(-counts, kind="stable")
    top = [(str(labels[i]), int(counts[i])) for i in order[:SHOWN_VALUES]]
    rest = int(counts[order[SHOWN_VALUES:]].sum())
    return top + ([("(other)", rest)] if rest else [])


def _kept_share(before: npt.NDArray[Any], after: npt.NDArray[Any]) -> float:
    """One minus the total variation distance of the two distributions."""
    if len(before) == 0 or len(after) == 0:
        return 0.0
    b_labels, b_counts = np.unique(np.asarray(before, dtype=str), return_counts=True)
    a_labels, a_counts = np.unique(np.asarray(after, dtype=str), return_counts=True)
    shares = dict(zip(b_labels.tolist(), (b_counts / b_counts.sum()).tolist()))
    other = dict(zip(a_labels.tolist(), (a_counts / a_counts.sum()).tolist()))
    tvd = 0.5 * sum(abs(shares.get(k, 0.0) - other.get(k, 0.0)) for k in {*shares, *other})
    return float(1.0 - tvd)


def _codes(values: npt.NDArray[Any]) -> tuple[npt.NDArray[np.str_], npt.NDArray[np.intp]]:
    labels, codes = np.unique(np.asarray(values, dtype=str), return_inverse=True)
    return labels, codes


def _cramers_v(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> float | None:
    """Cramér's V of two columns (None when one holds a single value)."""
    (xl, xc), (yl, yc) = _codes(x), _codes(y)
    if len(xl) < 2 or len(yl) < 2:
        return None
    observed = np.zeros((len(xl), len(yl)), dtype=np.int64)
    np.add.at(observed, (xc, yc), 1)
    contingency = import_optional("scipy.stats.contingency", feature="Cramér's V")
    return round(float(contingency.association(observed, method="cramer")), 4)


def _crosstab(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> dict[str, Any]:
    rows = [v for v, _ in _top(x) if v != "(other)"][:SHOWN_VALUES]
    cols = [v for v, _ in _top(y) if v != "(other)"][:SHOWN_VALUES]
    xs, ys = np.asarray(x, dtype=str), np.asarray(y, dtype=str)
    counts = [[int(np.count_nonzero((xs == r) & (ys == c))) for c in cols] for r in rows]
    return {"rows": rows, "columns": cols, "counts": counts}


def _summary(per: list[AttributeUtility], n: int, suppressed: int) -> str:
    qis = [a for a in per if a.quasi_identifier]
    full = [a for a in qis if a.fully_generalized]
    parts = [
        f"{len(full)} of {len(qis)} attribute{'s are' if len(qis) != 1 else ' is'} fully "
        "generalized" + (f" ({', '.join(a.attribute for a in full)})" if full else ""),
        f"{suppressed:,} row{'s' if suppressed != 1 else ''} ({suppressed / n:.1%}) suppressed"
        if suppressed
        else "no row suppressed",
    ]
    parts += [
        f"{a.attribute} keeps {a.kept_distribution:.1%} of its distribution"
        for a in per
        if not a.quasi_identifier
    ]
    return "; ".join(parts) + "."


#: The classifiers :func:`classification_utility` trains (scikit-learn).
CLASSIFIERS = ("logistic regression", "random forest")
#: The share of the released records held out to measure the accuracy.
TEST_SHARE = 0.3


@dataclass(frozen=True)
class ClassificationUtility:
    """How well a release still predicts an attribute, beside the data it came from.

    Attributes
    ----------
    target : str
        The attribute predicted (released as it is).
    features : list of str
        The attributes it is predicted from: the quasi-identifiers (the data's values, or
        the release's labels) and the other attributes released as they are.
    records, test_records : int
        The released records, and those held out to measure the accuracy.
    baseline : float
        The accuracy of always predicting the most frequent value (of the training records).
    accuracy : dict
        Per classifier, ``{"data": ..., "release": ...}``: the accuracy of a model trained on
        the data's values and of one trained on the release's labels, on the same held-out
        records.

    Examples
    --------
    >>> u = ClassificationUtility("income", ["age"], 100, 30, 0.75,
    ...                           {"random forest": {"data": 0.85, "release": 0.82}})
    >>> u.kept("random forest")
    0.7
    """

    target: str
    features: list[str]
    records: int
    test_records: int
    baseline: float
    accuracy: dict[str, dict[str, float]]

    def kept(self, classifier: str) -> float | None:
        """The share of the data's gain over the baseline the release keeps (None when the
        data's model does not beat the baseline)."""
        a = self.accuracy[classifier]
        gain = a["data"] - self.baseline
        if gain <= 0:
            return None
        return round((a["release"] - self.baseline) / gain, 4)

    def sentence(self) -> str:
        """What it means, for a steward."""
        parts = []
        for name in self.accuracy:
            share = self.kept(name)
            a = self.accuracy[name]
            parts.append(
                f"a {name} predicts {self.target} with {a['release']:.1%} accuracy from the "
                f"release against {a['data']:.1%} from the data"
                + (
                    f" (it keeps {share:.0%} of the gain over guessing)"
                    if share is not None
                    else ""
                )
            )
        return "; ".join(parts) + f"; guessing the most frequent value scores {self.baseline:.1%}."


def classification_utility(
    table: EncodedTable,
    result: AnonymizationResult,
    target: str,
    *,
    seed: int = 0,
) -> ClassificationUtility:
    """Train classifiers on the data and on the release and compare their accuracy, as ARX
    evaluates a release's classification performance.

    The released records are split once (``TEST_SHARE`` held out, stratified, ``seed``); a
    logistic regression and a random forest learn ``target`` from the other attributes,
    one-hot encoded: the data's values, or the release's labels (a suppressed cell ``*`` is a
    value of its own). Both models are measured on the same held-out records.

    Parameters
    ----------
    table : EncodedTable
        The data the release was made from.
    result : AnonymizationResult
        The release (made in memory).
    target : str
        An attribute released as it is (not a quasi-identifier).
    seed : int
        The split's and the forest's random seed.

    Returns
    -------
    ClassificationUtility

    Raises
    ------
    ParameterError
        ``target`` is a quasi-identifier, or holds one value on the released records.
    ColumnNotFoundError
        ``target`` is not a column of the data.
    OptionalDependencyError
        scikit-learn is not installed (``pip install 'anonlab[utility]'``).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 20,
    ...                                        "sick": ["y", "y", "n", "n"] * 20})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["sick"],
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> u = classification_utility(t, anonlab.anonymize(t, job), "sick")
    >>> u.accuracy["random forest"], u.baseline
    ({'data': 1.0, 'release': 1.0}, 0.5)
    """
    problem = result.problem
    qis = list(problem.quasi_identifiers)
    check_target(table, qis, target)
    if result.recoding is None:
        raise ParameterError("A per-partition release keeps its rows in the output file.")
    model_selection = import_optional("sklearn.model_selection", feature="classification utility")
    linear = import_optional("sklearn.linear_model", feature="classification utility")
    ensemble = import_optional("sklearn.ensemble", feature="classification utility")
    released = result.recoding.apply(problem)
    rows = (
        np.arange(table.n_rows)
        if result.recoding.rows is None
        else np.asarray(result.recoding.rows, dtype=np.int64)
    )
    gone = _suppressed_rows(result, len(rows))
    kept = rows[~gone]
    others = [c for c in table.names if c not in (*qis, target, *problem.identifiers)]
    y = np.asarray(table[target].labels()[kept], dtype=str)
    if len(set(y.tolist())) < 2:
        raise ParameterError(
            f"The classification target {target!r} holds one value on the released records."
        )
    data_x = _one_hot([table[c].labels()[kept] for c in [*qis, *others]])
    release_x = _one_hot(
        [np.asarray(released[q].labels(), dtype=object)[~gone] for q in qis]
        + [table[c].labels()[kept] for c in others]
    )
    values, counts = np.unique(y, return_counts=True)
    stratify = y if counts.min() >= 2 else None
    train, test = model_selection.train_test_split(
        np.arange(len(y)), test_size=TEST_SHARE, random_state=seed, stratify=stratify
    )
    train_values, train_counts = np.unique(y[train], return_counts=True)
    majority = train_values[int(np.argmax(train_counts))]
    baseline = float(np.mean(y[test] == majority))
    makers: dict[str, Callable[[], Any]] = {
        "logistic regression": lambda: linear.LogisticRegression(max_iter=500),
        "random forest": lambda: ensemble.RandomForestClassifier(
            n_estimators=50, min_samples_leaf=2, random_state=seed, n_jobs=1
        ),
    }
    accuracy = {}
    for name, make in makers.items():
        scores = {}
        for source, x in (("data", data_x), ("release", release_x)):
            model = make().fit(x[train], y[train])
            scores[source] = round(float(model.score(x[test], y[test])), 4)
        accuracy[name] = scores
    return ClassificationUtility(
        target, [*qis, *others], len(y), len(test), round(baseline, 4), accuracy
    )


def check_target(table: EncodedTable, quasi_identifiers: Sequence[str], target: str) -> None:
    """Refuse a classification target that is a quasi-identifier or not a column (one line
    naming it), before any work.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350"], "sick": ["y"]})
    >>> check_target(t, ["zip"], "sick")  # returns None: a column released as it is
    """
    if target in quasi_identifiers:
        raise ParameterError(
            f"The classification target {target!r} is a quasi-identifier: the release "
            "generalizes it. Choose an attribute released as it is (a sensitive one)."
        )
    if target not in table.names:
        raise ColumnNotFoundError(
            f"Unknown classification target {target!r}: the data has no such column."
        )


def _one_hot(columns: list[npt.NDArray[Any]]) -> Any:
    """The columns one-hot encoded, as one sparse matrix (a value per column and label)."""
    sparse = import_optional("scipy.sparse", feature="classification utility")
    blocks = []
    for values in columns:
        _, codes = np.unique(np.asarray(values, dtype=str), return_inverse=True)
        n, width = len(codes), int(codes.max()) + 1 if len(codes) else 0
        blocks.append(
            sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, max(width, 1)))
        )
    return sparse.hstack(blocks, format="csr")
