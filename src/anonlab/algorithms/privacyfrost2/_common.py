"""Helpers shared by the PrivacyFrost2 modules: level conventions and checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from anonlab._validation import Param
from anonlab.exceptions import ParameterError

__all__ = ["from_paper_levels", "per_attribute", "to_paper_levels"]


def to_paper_levels(levels: Sequence[int], heights: Sequence[int]) -> tuple[int, ...]:
    """Convert anonlab levels (0 = original values) to the paper's, counted from the root
    down: ``w = height - level``. The paper's minimum level ``w^M`` is anonlab's
    ``max_level``, its lowest level ``w^L`` anonlab's ``min_level``, its "generalization"
    ``w <- w - 1`` is ``level + 1`` here. The only place the conversion is written.
    """
    return tuple(int(h) - int(lv) for lv, h in zip(levels, heights))


def from_paper_levels(paper_levels: Sequence[int], heights: Sequence[int]) -> tuple[int, ...]:
    """Convert levels counted from the root (the paper's) to anonlab levels (the inverse of
    :func:`to_paper_levels`)."""
    return to_paper_levels(paper_levels, heights)


def per_attribute(
    value: Mapping[str, int] | Sequence[int],
    attributes: Sequence[str],
    name: str,
    *,
    param: Param,
    default: int | None = None,
    owner: str = "privacyfrost2",
) -> list[int]:
    """One int per attribute from a mapping (by name) or a sequence (table order), each
    checked by ``param``.

    A mapping may omit attributes when ``default`` is given; it may not name unknown ones.
    """
    if isinstance(value, Mapping):
        unknown = [a for a in value if a not in attributes]
        if unknown:
            raise ParameterError(
                f"The {name!r} parameter of {owner} names {unknown[0]!r}, which is not a "
                f"quasi-identifier. Quasi-identifiers: {', '.join(map(repr, attributes))}."
            )
        missing = [a for a in attributes if a not in value]
        if missing and default is None:
            raise ParameterError(
                f"The {name!r} parameter of {owner} needs a value for every quasi-identifier; "
                f"missing: {', '.join(map(repr, missing))}."
            )
        raw: list[object] = [value.get(a, default) for a in attributes]
    elif isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise ParameterError(
            f"The {name!r} parameter of {owner} must be a mapping from quasi-identifier to int "
            f"or a sequence of {len(attributes)} ints. Got {value!r} instead."
        )
    else:
        raw = list(value)
        if len(raw) != len(attributes):
            raise ParameterError(
                f"The {name!r} parameter of {owner} must have one value per quasi-identifier "
                f"({len(attributes)}: {', '.join(map(repr, attributes))}). Got {len(raw)}."
            )
    return [int(param.check(v, f"{name}[{a}]", owner=owner)) for v, a in zip(raw, attributes)]
