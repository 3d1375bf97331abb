"""The anonymizer protocol and the registry of algorithms the job file names.

An algorithm is a class in scikit-learn's shape: ``__init__`` stores keyword arguments and
nothing else; :meth:`Anonymizer.fit` validates them against ``_parameter_constraints`` (one
place, one uniform message), reads a :class:`~anonlab.release.problem.Problem` and sets
``recoding_`` (a :class:`~anonlab.release.recoding.Recoding`) and ``search_`` (its typed
:class:`~anonlab.release.result.SearchStats`). A family registers its classes with
:func:`register`; :func:`build_anonymizer` builds one from a job's name and parameters.
"""

from __future__ import annotations

import copy
import inspect
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab._registry import Registry
from anonlab._validation import Param, did_you_mean
from anonlab.exceptions import ParameterError
from anonlab.metrics.base import MetricContext
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding
from anonlab.release.result import SearchStats

__all__ = [
    "ALGORITHMS",
    "Anonymizer",
    "Param",
    "algorithm_families",
    "frequency_set_algorithms",
    "partition_algorithm_names",
    "partition_algorithms",  # (declared in anonlab._validation: one vocabulary for every layer)
    "build_anonymizer",
    "register",
]


class Anonymizer(ABC):
    """An anonymization algorithm: parameters in, a recoding of a Problem out.

    Subclasses declare ``name`` (the job file's name), ``_parameter_constraints`` (a
    :class:`Param` per ``__init__`` keyword) and implement :meth:`_fit`. ``__init__`` stores
    its keyword arguments only.

    Attributes
    ----------
    recoding_ : Recoding
        Set by :meth:`fit`.
    search_ : SearchStats
        Set by :meth:`fit`.
    context_ : MetricContext or None
        The metric context of the rows the recoding keeps, when the algorithm built one
        (the verification reuses it instead of grouping the table again).

    Examples
    --------
    >>> algorithm = build_anonymizer("optimal")
    >>> isinstance(algorithm, Anonymizer), algorithm.name
    (True, 'optimal')
    """

    name: ClassVar[str] = ""
    _parameter_constraints: ClassVar[dict[str, Param]] = {}
    #: How the algorithm's releases are verified, known before it runs: the
    #: :attr:`Recoding.verifier` of every recoding it returns (``"classes"``: grouping the
    #: released labels; ``"graph"``: a cell cover on its anonymity graph). ``anonlab check
    #: --release`` judges a written release the same way.
    verifier: ClassVar[str] = "classes"
    #: The family in words, as help texts list the algorithms (:func:`algorithm_families`).
    family: ClassVar[str] = ""
    #: Out of core, the rows per block when the job does not say (``block_rows``), for an
    #: algorithm that :meth:`accepts_partitions`; None: Murakami & Uno's
    #: :data:`~anonlab.release.partitioned.DEFAULT_BLOCK_ROWS`.
    block_rows: ClassVar[int | None] = None
    #: The parameters with which the algorithm runs on a frequency set, in words, when not
    #: all do (:func:`frequency_set_algorithms`).
    frequency_set_condition: ClassVar[str] = ""
    #: Whether the algorithm judges models against a population table
    #: (:attr:`~anonlab.models.base.PrivacyModel.population_table`: k-map with a population table,
    #: delta-presence): its search counts every class's population records and it releases a
    #: full-domain generalization, which the verification applies to the population too.
    judges_population: ClassVar[bool] = False

    recoding_: Recoding
    search_: SearchStats
    context_: MetricContext | None = None
    #: The problem and the parameters :meth:`check` last accepted.
    _checked: tuple[weakref.ref[Problem], dict[str, Any]] | None = None

    @classmethod
    def parameter_names(cls) -> list[str]:
        """The keyword arguments of ``__init__``, in order."""
        params = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in params if p.name != "self" and p.kind is p.KEYWORD_ONLY]

    def get_params(self) -> dict[str, Any]:
        """The parameters as stored by ``__init__``."""
        return {name: getattr(self, name) for name in self.parameter_names()}

    def _validate_params(self) -> None:
        """Check every parameter against its :class:`Param` (the one wording)."""
        for name, value in self.get_params().items():
            rule = self._parameter_constraints.get(name)
            if rule is not None:
                rule.check(value, name, owner=self.name)

    def fit(self, problem: Problem, *, progress: Progress | None = None) -> Anonymizer:
        """Validate the parameters (unless :meth:`check` just did, for this problem and
        these parameters), then find a recoding of ``problem``.

        Parameters
        ----------
        problem : Problem
        progress : callable, optional
            ``progress(advance, total)`` as the search advances.

        Returns
        -------
        Anonymizer
            ``self``, with ``recoding_`` and ``search_`` set.
        """
        if not self._checked_for(problem):
            self.check(problem)
        self._fit(problem, progress)
        return self

    def check(self, problem: Problem) -> None:
        """Refuse, before any work, what :meth:`fit` would refuse: a bad parameter, a
        frequency set the algorithm cannot use, a problem it cannot solve.

        Parameters
        ----------
        problem : Problem

        Raises
        ------
        ParameterError
            Naming the parameter, or what the algorithm needs.
        """
        self._checked = None
        self._validate_params()
        self._check_frequency_set(problem)
        self._check_population(problem)
        self._check_problem(problem)
        self._checked = (weakref.ref(problem), copy.deepcopy(self.get_params()))

    def _checked_for(self, problem: Problem) -> bool:
        """Whether :meth:`check` passed for this very problem with the parameters as they are
        now (a job checks before it opens anything; :meth:`fit` then does not check again)."""
        if self._checked is None:
            return False
        ref, params = self._checked
        try:
            return ref() is problem and bool(params == self.get_params())
        except (TypeError, ValueError):  # a parameter that does not compare: check again
            return False

    def _check_population(self, problem: Problem) -> None:
        """Refuse models with a population table unless the algorithm judges them."""
        if self.judges_population:
            return
        for m in problem.models:
            if m.population_table is not None:
                able = ", ".join(
                    sorted(name for name, cls in ALGORITHMS.registered() if cls.judges_population)
                )
                raise ParameterError(
                    f"Algorithm {self.name!r} cannot judge model {m.name!r} against a "
                    f"population table; use one that does ({able})."
                )

    def _check_problem(self, problem: Problem) -> None:
        """Refuse, before any work, a problem the algorithm cannot solve (default: accept)."""
        del problem

    def accepts_frequency_set(self) -> bool:
        """Whether the algorithm, with its parameters, runs on a frequency set.

        A frequency set (a :class:`~anonlab.release.problem.Problem` whose table has row
        weights: the distinct combinations of the quasi-identifiers and sensitive attributes
        with their counts, as an out-of-core engine computes them) holds class statistics
        but no individual rows. Searches that judge classes only (full-domain
        generalization) accept it; algorithms that place rows one by one do not (the
        default).

        Returns
        -------
        bool
        """
        return False

    def accepts_partitions(self) -> bool:
        """Whether the algorithm, with its parameters, runs out of core partition by partition.

        An algorithm that places individual rows cannot run on a frequency set; out of core
        it runs on blocks of the table sorted on its quasi-identifiers, each block anonymized
        and verified on its own (Murakami & Uno, section 3.2.3; see
        :mod:`anonlab.release.partitioned` for why the union of verified blocks satisfies
        the models). The row-placing families (local recoding, non-homogeneous
        generalization, personalized privacy, Mondrian, microaggregation, local
        suppression) accept it; the default does not.

        Returns
        -------
        bool
        """
        return False

    def removed_rows(self, problem: Problem) -> npt.NDArray[np.bool_] | None:
        """The rows the algorithm removes before anonymizing, decided by the table alone.

        A release of the algorithm lacks these rows (its :attr:`Recoding.rows` leaves them
        out) besides the rows suppressed because their class fails a model; ``anonlab check
        --release`` reads a release against the other rows. The default removes none.

        Parameters
        ----------
        problem : Problem

        Returns
        -------
        ndarray of bool or None
            Per row of the problem's table, whether it is removed; None: no row is.

        Examples
        --------
        >>> from anonlab.algorithms import build_anonymizer
        >>> build_anonymizer("optimal").removed_rows(None) is None
        True
        """
        del problem
        return None

    def suppresses_rows(self) -> bool:
        """Whether the algorithm's release may suppress rows.

        A release that forms equivalence classes suppresses the classes that fail a model,
        within the job's ``suppression`` limit (removed, or masked with
        ``output: {suppressed: mask}``): the default. A cell cover (non-homogeneous
        generalization) releases every record; those job options would do nothing, and
        are refused.

        Returns
        -------
        bool
        """
        return True

    def _check_frequency_set(self, problem: Problem) -> None:
        """Refuse a frequency set when the algorithm needs the individual rows."""
        if problem.weighted and not self.accepts_frequency_set():
            raise ParameterError(
                f"Algorithm {self.name!r} places individual rows, and this table was read "
                "out of core as the counts of its distinct combinations (the DuckDB engine), "
                f"which it cannot use. {frequency_set_algorithms()} run on any engine; or run "
                f"{self.name!r} on a table that fits in memory (--engine numpy). Nothing "
                "was written."
            )

    @abstractmethod
    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        """Set ``recoding_`` and ``search_`` (and ``context_`` if available)."""

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


#: Every algorithm by its job-file name (filled by :func:`register`, and by installed packages
#: through the entry-point group ``anonlab.algorithms``).
ALGORITHMS: Registry[type[Anonymizer]] = Registry(
    "algorithm", group="anonlab.algorithms", sort=True
)

_A = TypeVar("_A", bound=type[Anonymizer])


def register(cls: _A) -> _A:
    """Class decorator: make an algorithm available to job files under ``cls.name``.

    Examples
    --------
    >>> "optimal" in ALGORITHMS  # registered by ``@register`` on its class
    True
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name.")
    ALGORITHMS.register(cls.name, cls)
    return cls


def frequency_set_algorithms() -> str:
    """The algorithms that run on a frequency set, in words (for messages), from the
    registry: each whose default instance :meth:`~Anonymizer.accepts_frequency_set`, with
    its :attr:`~Anonymizer.frequency_set_condition`.

    Examples
    --------
    >>> import anonlab.algorithms
    >>> frequency_set_algorithms()
    'The full-domain searches (optimal, incognito, and privacyfrost2 without partial_domain and presampling)'
    """
    names = [
        f"{name} {cls.frequency_set_condition}".strip()
        for name, cls in ALGORITHMS.registered()
        if _by_default(cls, "accepts_frequency_set")
    ]
    listed = ", ".join(names[:-1]) + ", and " + names[-1] if len(names) > 2 else " and ".join(names)
    return f"The full-domain searches ({listed})"


def partition_algorithms() -> str:
    """The algorithms that run out of core partition by partition, in words (for messages),
    from the registry: each whose default instance :meth:`~Anonymizer.accepts_partitions`.

    Examples
    --------
    >>> import anonlab.algorithms
    >>> partition_algorithms()
    'The row-placing algorithms (progressive, top_down, local_suppression, microaggregation, mondrian, wong_nh, murakami_uno, personalized)'
    """
    return f"The row-placing algorithms ({', '.join(partition_algorithm_names())})"


def partition_algorithm_names() -> list[str]:
    """The names of the algorithms that run out of core partition by partition.

    Examples
    --------
    >>> import anonlab.algorithms
    >>> partition_algorithm_names()[:2]
    ['progressive', 'top_down']
    """
    return [name for name, cls in ALGORITHMS.registered() if _by_default(cls, "accepts_partitions")]


def algorithm_families() -> str:
    """Every algorithm, grouped by :attr:`~Anonymizer.family` in registration order, as help
    texts list them.

    Examples
    --------
    >>> import anonlab.algorithms
    >>> algorithm_families().split("; ")[0]
    'optimal, incognito or privacyfrost2 (full-domain generalization)'
    """
    families: dict[str, list[str]] = {}
    for name, cls in ALGORITHMS.registered():
        families.setdefault(cls.family, []).append(name)
    parts = []
    for family, names in families.items():
        listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
        parts.append(f"{listed} ({family})" if family else listed)
    return "; ".join(parts)


def _by_default(cls: type[Anonymizer], capability: str) -> bool:
    """Whether the algorithm with its default parameters has ``capability``."""
    try:
        return bool(getattr(cls(), capability)())
    except Exception:  # an algorithm without defaults for every parameter: not listed
        return False


def __getattr__(name: str) -> str:
    """``FREQUENCY_SET_ALGORITHMS`` and ``PARTITION_ALGORITHMS``: the texts above, made
    from the registry when read (the families register after this module is loaded)."""
    if name == "FREQUENCY_SET_ALGORITHMS":
        return frequency_set_algorithms()
    if name == "PARTITION_ALGORITHMS":
        return partition_algorithms()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_anonymizer(name: str, params: Mapping[str, Any] | None = None) -> Anonymizer:
    """Build the algorithm ``name`` with ``params`` (validated when it is fit).

    Parameters
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    params : Mapping, optional
        Its parameters, as the job file gives them.

    Raises
    ------
    ParameterError
        An unknown algorithm or an unknown parameter; the message names the valid ones.

    Examples
    --------
    >>> type(build_anonymizer("optimal")).__name__
    'OptimalSearch'
    >>> build_anonymizer("optimall")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Unknown algorithm 'optimall'. Did you mean 'optimal'? ...
    """
    cls = ALGORITHMS.lookup(name)
    valid = cls.parameter_names()
    for key in params or {}:
        if key not in valid:
            listed = ", ".join(valid) if valid else "none"
            raise ParameterError(
                f"Unknown parameter {key!r} of algorithm {name!r}."
                f"{did_you_mean(str(key), valid)} Valid parameters: {listed}."
            )
    return cls(**dict(params or {}))
