"""Pre-sampling of PrivacyFrost2: remove isolated records before anonymizing (section 5.1).

The removal is computed on the base classes of a
:class:`~anonlab.algorithms._lattice.LatticeEvaluator` without touching rows (:func:`presample`);
a row is removed iff its base class is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param, check_int
from anonlab.algorithms._lattice.lattice import LatticeEvaluator
from anonlab.algorithms.privacyfrost2._common import per_attribute, to_paper_levels
from anonlab.exceptions import InputError, ParameterError

#: A pre-sampling threshold level of an attribute.
_THRESHOLD = Param(int, low=0)

__all__ = ["PreSampling", "PreSample", "presample", "restrict_evaluator"]


@dataclass(frozen=True)
class PreSampling:
    """Parameters of the pre-sampling step (paper section 5.1).

    Parameters
    ----------
    thresholds : Mapping[str, int] or sequence of int
        ``u``: the level each quasi-identifier is generalized to before counting, in anonlab
        levels (0 = original values, ``height`` = root); the paper's ``u_{a^i}``, counted
        from the root, is ``height - thresholds[a^i]`` (:func:`to_paper_levels`). A mapping
        must name every quasi-identifier; a sequence follows the table order.
    k_prime : int
        ``k'``: records of groups with fewer than ``k'`` records at the threshold levels are
        removed; an int >= 1 (``k' = 1`` removes nothing).

    Raises
    ------
    ParameterError
        If ``k_prime`` is not an int >= 1 (thresholds are checked against the hierarchies by
        :func:`presample`).

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 5.1 and Table 1.
    """

    thresholds: Mapping[str, int] | Sequence[int]
    k_prime: int

    def __post_init__(self) -> None:
        check_int(self.k_prime, "k_prime", low=1, owner="PreSampling")

    def levels(self, evaluator: LatticeEvaluator) -> tuple[int, ...]:
        """The validated threshold level of each quasi-identifier of ``evaluator``."""
        attrs = evaluator.base.columns
        levels = per_attribute(
            self.thresholds, attrs, "thresholds", param=_THRESHOLD, owner="PreSampling"
        )
        for a, lv, h in zip(attrs, levels, evaluator.heights()):
            if lv > h:
                raise ParameterError(
                    f"The 'thresholds' parameter of PreSampling gives level {lv} for "
                    f"quasi-identifier {a!r}, above its hierarchy's height {h}."
                )
        return tuple(levels)


@dataclass(frozen=True)
class PreSample:
    """The outcome of :func:`presample`.

    Attributes
    ----------
    keep : ndarray of bool, shape (n_base_classes,)
        Per base class of the evaluator, whether its records stay.
    removed_rows, kept_rows : int
        Records removed (isolated) and records that stay.
    removed_groups : int
        Groups at the threshold levels with fewer than ``k'`` records.
    thresholds, thresholds_from_root : tuple of int
        The threshold levels used (anonlab levels), and counted from the root (the paper's
        ``u``).
    k_prime : int
    """

    keep: npt.NDArray[np.bool_] = field(repr=False)
    removed_rows: int
    kept_rows: int
    removed_groups: int
    thresholds: tuple[int, ...]
    thresholds_from_root: tuple[int, ...]
    k_prime: int


def presample(evaluator: LatticeEvaluator, presampling: PreSampling) -> PreSample:
    """Find the isolated records of the table (PrivacyFrost2 pre-sampling, section 5.1).

    Every quasi-identifier is generalized to its threshold level ``u``, records are grouped
    by their generalized values, and the records of groups with fewer than ``k'`` records
    are to be removed from the *original* table: the result is a mask over the base classes
    of ``evaluator`` (one grouping of the base classes, no loop over rows).

    Parameters
    ----------
    evaluator : LatticeEvaluator
        The evaluator of the whole table.
    presampling : PreSampling
        Threshold levels ``u`` and ``k'``.

    Returns
    -------
    PreSample

    Raises
    ------
    ParameterError
        If a threshold is not an int in ``[0, height]`` or a quasi-identifier is missing.

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 5.1.
    """
    levels = presampling.levels(evaluator)
    base = evaluator.base
    ids, sizes = evaluator.classes(levels)
    small = sizes < presampling.k_prime
    keep = ~small[ids]
    return PreSample(
        keep=np.asarray(keep, dtype=bool),
        removed_rows=int(base.sizes[~keep].sum()),
        kept_rows=int(base.sizes[keep].sum()),
        removed_groups=int(small.sum()),
        thresholds=levels,
        thresholds_from_root=to_paper_levels(levels, evaluator.heights()),
        k_prime=presampling.k_prime,
    )


def restrict_evaluator(
    evaluator: LatticeEvaluator, keep: npt.NDArray[np.bool_]
) -> LatticeEvaluator:
    """The evaluator of the table without the records pre-sampling removes
    (:meth:`LatticeEvaluator.restricted`).

    Raises
    ------
    InputError
        If no record is left.
    """
    if not np.any(keep):
        raise InputError(
            "Pre-sampling removed every record: no group at the threshold levels has k' "
            "records. Lower k' or raise the threshold levels."
        )
    return evaluator.restricted(keep)
