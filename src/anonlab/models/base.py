"""The privacy-model interface: a model judges every equivalence class of a ClassStats at once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.population import Population
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError

__all__ = [
    "ClassRule",
    "PrivacyModel",
    "RuleArray",
    "RuleParams",
    "failing_classes",
    "population_of",
]

#: The arrays a :class:`ClassRule` function reads: counts, and the model's parameters.
RuleArray = npt.NDArray[np.int64]
RuleParams = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ClassRule:
    """A model's verdict on one class as a plain function, for compiled judges.

    ``function(size, counts, table_counts, n_total, params) -> bool`` says whether one class
    satisfies the model, with exactly the arithmetic of the model's :meth:`PrivacyModel.class_ok`.
    It is a module-level function of the model's own module written for numba's nopython
    mode (integers, floats and 1-d numpy arrays; no Python objects; it calls numpy but no
    other function): the caller compiles it (``anonlab.models`` never imports numba).

    Attributes
    ----------
    function : callable
        ``size`` (int): the class's records; ``counts`` (1-d int64 array): its count of each
        value of the model's sensitive attribute (``sensitive_attributes[0]``; empty for a
        model without one); ``table_counts`` (1-d int64 array): the whole table's counts of
        those values; ``n_total`` (int): the whole table's records (the sum of
        ``table_counts`` when there is a sensitive attribute); ``params`` (1-d float64
        array): :attr:`params`.
    params : tuple of float
        The model's parameters as the function reads them.
    """

    function: Callable[..., bool]
    params: tuple[float, ...]


class PrivacyModel(ABC):
    """A privacy model: a validated value object that judges classes, vectorised.

    Subclasses declare their parameters' constraints in ``_parameter_constraints`` (a
    :class:`~anonlab._validation.Param` each, the vocabulary of algorithms, metrics and
    job keys too), check them in ``__init__`` with :meth:`_checked` (raising
    :class:`~anonlab.exceptions.ParameterError` with the one wording) and implement
    :meth:`class_ok`.

    Attributes
    ----------
    name : str
        The model's name in job files (``"k_anonymity"``, ``"recursive_cl_diversity"``, ...).
    monotonic_generalization : bool
        If a table satisfies the model, every more general table (coarser classes, no
        suppression) does too. A class attribute; a model whose monotonicity depends on its
        parameters (simple (alpha,k)-anonymity with the refined ceiling) sets it per instance.
    monotonic_suppression : bool
        The model stays monotonic when violating classes are suppressed (suppression-aware
        pruning is safe). Class attribute, possibly overridden per instance as above.
    union_safe : str or None
        Why the model survives a union of verified blocks (a release made block by block
        out of core, :func:`anonlab.release.partitioned.check_union`): a union of classes
        that each satisfy it satisfies it, and a class's verdict does not depend on the rest
        of the table; None when it may not (the default). Class attribute, possibly
        overridden per instance as above.
    union_unsafe : str
        Why a union of verified blocks may violate it (named when a block run refuses it).
    sample_based : bool
        The model judges the whole table that is left once the classes failing the
        class-based models are suppressed (ARX's sample-based criteria: average
        re-identification risk, sample and population uniqueness), not each class on its
        own; :meth:`enforce` then suppresses further classes until the rest satisfies it,
        and :func:`failing_classes` runs the class-based models first.
    population_table : Population or None
        The population table the model judges the classes against (k-map with a population
        table, delta-presence): the class statistics it judges then hold each class's
        population records (:attr:`ClassStats.population_sizes`), which the search and the
        verification count on the same generalized keys. None (the default) for the others.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> from anonlab.models import KAnonymity
    >>> stats = open_engine(EncodedTable.from_columns({"sex": ["F", "F", "M"]})).class_stats(["sex"])
    >>> model: PrivacyModel = KAnonymity(2)
    >>> model.name, model.class_ok(stats).tolist(), model.holds(stats), model.value(stats)
    ('k_anonymity', [True, False], False, 1)
    """

    name: ClassVar[str] = ""
    monotonic_generalization: bool = False
    monotonic_suppression: bool = False
    union_safe: str | None = None
    union_unsafe: str = "anonlab cannot show that the union of blocks keeps it"
    sample_based: ClassVar[bool] = False
    population_table: Population | None = None
    #: The declared constraint of each ``__init__`` parameter.
    _parameter_constraints: ClassVar[dict[str, Param]] = {}

    def _checked(self, name: str, value: Any) -> Any:
        """``value`` checked against the declared constraint of the parameter ``name``
        (an int returned as ``int``, a number as ``float``).

        Raises
        ------
        ParameterError
            ``The 'k' parameter of KAnonymity must be an int >= 1. Got 0 instead.``
        """
        return self._parameter_constraints[name].check(value, name, owner=type(self).__name__)

    @classmethod
    def wants_population(cls, params: dict[str, Any]) -> bool:
        """Whether the model built from the job-file parameters ``params`` reads the job's
        population table (its ``population`` parameter); False by default.

        Examples
        --------
        >>> from anonlab.models import DeltaPresence, KAnonymity, KMap
        >>> KAnonymity.wants_population({"k": 2}), DeltaPresence.wants_population({})
        (False, True)
        >>> KMap.wants_population({"k": 5}), KMap.wants_population({"k": 5, "sampling_fraction": 0.1})
        (True, False)
        """
        del params
        return False

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """Sensitive attributes whose per-class value counts the model needs."""
        return ()

    @property
    def min_class_size(self) -> int:
        """The smallest class size that can satisfy the model (k, ceil(l), ...; 1 if none)."""
        return 1

    @abstractmethod
    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, for each class of ``stats``, whether it satisfies the model.

        Global distributions (the whole table's sensitive-value frequencies) are the
        column sums of ``stats.sensitive[attribute].counts``: ``stats`` always covers every
        row of the table, before suppression.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> from anonlab.models import KAnonymity
        >>> stats = open_engine(EncodedTable.from_columns({"sex": ["F", "F", "M"]})).class_stats(["sex"])
        >>> KAnonymity(2).class_ok(stats).tolist()
        [True, False]
        """

    def class_rule(self) -> ClassRule | None:
        """The verdict on one class as a compilable function, or None (the default).

        A model that returns a :class:`ClassRule` lets compiled search code judge its
        classes without calling :meth:`class_ok`; the rule must agree with :meth:`class_ok`
        on every class. None: the model judges itself, through :meth:`class_ok`. A subclass
        that changes :meth:`class_ok` must change this too (the built-in models return None
        for a subclass).
        """
        return None

    def enforce(self, stats: ClassStats, failing: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """The classes to suppress: ``failing`` and the classes this model fails.

        A class-based model adds the classes where :meth:`class_ok` is False; a
        sample-based model (:attr:`sample_based`) judges the classes that ``failing``
        leaves and adds those it must suppress for the rest to satisfy it.

        Examples
        --------
        >>> import numpy as np
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> from anonlab.models import KAnonymity
        >>> stats = open_engine(EncodedTable.from_columns({"sex": ["F", "F", "M"]})).class_stats(["sex"])
        >>> KAnonymity(2).enforce(stats, np.zeros(2, dtype=bool)).tolist()
        [False, True]
        """
        ok = np.asarray(self.class_ok(stats), dtype=bool)
        return np.asarray(np.asarray(failing, dtype=bool) | ~ok, dtype=bool)

    def holds(self, stats: ClassStats) -> bool:
        """Whether every class satisfies the model.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> from anonlab.models import KAnonymity
        >>> stats = open_engine(EncodedTable.from_columns({"sex": ["F", "F", "M"]})).class_stats(["sex"])
        >>> KAnonymity(1).holds(stats), KAnonymity(2).holds(stats)
        (True, False)
        """
        return bool(np.all(self.class_ok(stats)))

    def value(self, stats: ClassStats) -> float:
        """Return the table-level achieved parameter (k, l, t, alpha, ...) of ``stats``.

        Each model documents what its value means and for which parameters the model holds
        given that value. An empty table gives 0.

        Raises
        ------
        NotImplementedError
            If the model has no meaningful table-level parameter.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> from anonlab.models import DistinctLDiversity
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350"], "disease": ["flu", "hiv"]})
        >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
        >>> DistinctLDiversity("disease", 2).value(stats)
        2
        """
        raise NotImplementedError(f"The model {self.name!r} has no table-level value.")

    def check_feasible(self, stats: ClassStats) -> None:
        """Raise :class:`~anonlab.exceptions.ParameterError` if no release can satisfy the model.

        Only impossibilities that no generalization *and no suppression* can repair are
        reported (for example ``l`` larger than the number of distinct sensitive values in
        the whole table). ``stats`` may be the classes of any transformation: only its
        column sums (the whole table's distribution) are used. The default accepts.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> from anonlab.models import DistinctLDiversity
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4351"], "disease": ["flu", "flu"]})
        >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
        >>> DistinctLDiversity("disease", 2).check_feasible(stats)
        Traceback (most recent call last):
        ...
        anonlab.exceptions.ParameterError: The 'l' parameter of DistinctLDiversity (l=2) is larger than the number of distinct values of sensitive attribute 'disease' in the whole table (1: 'flu'); no class can hold 2 distinct values. Choose l <= 1.
        """
        del stats

    def params(self) -> dict[str, Any]:
        """The parameters, as written in a job file.

        Examples
        --------
        >>> from anonlab.models import RecursiveCLDiversity
        >>> RecursiveCLDiversity("disease", c=3, l=2).params()
        {'attribute': 'disease', 'c': 3.0, 'l': 2}
        """
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def failing_classes(
    models: Sequence[PrivacyModel],
    stats: ClassStats,
    failing: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.bool_]:
    """The classes of ``stats`` to suppress so that every model holds on the rest.

    The class-based models first, each adding the classes it fails; then each sample-based
    model (:attr:`PrivacyModel.sample_based`) on what is left, suppressing further classes
    until the rest satisfies it (ARX's order: class-based criteria, then sample-based ones).

    Parameters
    ----------
    models : sequence of PrivacyModel
    stats : ClassStats
    failing : ndarray of bool, optional
        Classes already suppressed (below the minimal class size, ...); none by default.

    Returns
    -------
    ndarray of bool
        Per class, whether it is suppressed.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> from anonlab.models import KAnonymity, SampleUniqueness
    >>> t = EncodedTable.from_columns({"zip": ["1", "1", "2", "3", "4"]})
    >>> stats = open_engine(t).class_stats(["zip"])
    >>> failing_classes([SampleUniqueness(0.5)], stats).tolist()
    [False, True, False, False]
    >>> failing_classes([KAnonymity(2), SampleUniqueness(0.5)], stats).tolist()
    [False, True, True, True]
    """
    out = np.zeros(stats.n_classes, dtype=bool) if failing is None else np.array(failing, bool)
    for m in models:
        if not m.sample_based:
            out = m.enforce(stats, out)
    for m in models:
        if m.sample_based:
            out = m.enforce(stats, out)
    return out


def population_of(models: Sequence[PrivacyModel]) -> Population | None:
    """The one population table the models read (:attr:`PrivacyModel.population_table`), or
    None when none reads one.

    Raises
    ------
    ParameterError
        If the models read different population tables.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.models import DeltaPresence, KAnonymity
    >>> pop = Population(EncodedTable.from_columns({"zip": ["1", "2"]}), "pop.csv")
    >>> population_of([KAnonymity(2)]), population_of([KAnonymity(2), DeltaPresence(0, 1, pop)])
    (None, Population('pop.csv', 2 rows))
    """
    tables = {id(m.population_table): m.population_table for m in models}
    tables.pop(id(None), None)
    if len(tables) > 1:
        raise ParameterError(
            "The models read different population tables; a job has one population table."
        )
    return next(iter(tables.values()), None)
