"""The compiled judge of classes of base classes, built from the models' own rules.

A privacy model with a :meth:`~anonlab.models.base.PrivacyModel.class_rule` gives its verdict
on one class as a plain function; :func:`judge_of` chains the rules of a set of models into
one compiled function that judges many classes at once from their sizes and their sensitive
counts, every sensitive attribute side by side (:class:`SensitiveColumns`, as
:func:`class_hists` sums them from the base classes). The
:class:`~anonlab.algorithms._lattice.LatticeEvaluator` builds both once
(``sensitive_columns``, ``judge``); a search calls the judge from Python, or from its own
compiled code (``Judge.function``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab._compiled import jit, numba
from anonlab.models.base import PrivacyModel

__all__ = ["Judge", "Rules", "SensitiveColumns", "class_hists", "judge_of", "named"]

I64 = npt.NDArray[np.int64]
_CACHE: dict[Any, Any] = {}
_REGISTERED: set[Callable[..., Any]] = set()


class SensitiveColumns(NamedTuple):
    """The base classes' sensitive counts, every sensitive attribute side by side.

    Attributes
    ----------
    layout : dict
        Per sensitive attribute, its first column and its number of columns (values).
    cls, val, cnt : ndarray of int64
        Every non-zero count: its base class, column and count.
    n_columns : int
    total : ndarray of int64
        The whole table's count in each column.
    """

    layout: dict[str, tuple[int, int]]
    cls: I64
    val: I64
    cnt: I64
    n_columns: int
    total: I64


def side_by_side(
    sparse: Mapping[str, tuple[npt.NDArray[np.integer], npt.NDArray[np.integer], Any, int]],
) -> SensitiveColumns:
    """:class:`SensitiveColumns` of per-attribute sparse counts (base class, value and count
    of each non-zero count, and the number of values: ``LatticeEvaluator.sparse_histograms``)."""
    layout: dict[str, tuple[int, int]] = {}
    nv = 0
    for name, (_, _, _, nvals) in sparse.items():
        layout[name] = (nv, nvals)
        nv += nvals
    if sparse:
        cls = np.concatenate([t[0] for t in sparse.values()]).astype(np.int64, copy=False)
        val = np.concatenate([t[1] + layout[name][0] for name, t in sparse.items()])
        cnt = np.concatenate([t[2] for t in sparse.values()]).astype(np.int64)
    else:
        cls = val = cnt = np.zeros(0, dtype=np.int64)
    total = np.bincount(val, weights=cnt, minlength=nv).astype(np.int64)
    return SensitiveColumns(layout, cls, val.astype(np.int64, copy=False), cnt, nv, total)


def _class_hists(ids, g, cls, val, cnt, nv):
    hist = np.zeros((g, nv), dtype=np.int64)
    for e in range(cls.size):
        hist[ids[cls[e]], val[e]] += cnt[e]
    return hist


def class_hists(ids: npt.NDArray[np.integer], g: int, columns: SensitiveColumns) -> I64:
    """The sensitive counts ``(g, columns.n_columns)`` of the classes ``ids`` (the class of
    each base class), compiled."""
    if "hists" not in _CACHE:
        _CACHE["hists"] = jit(_class_hists)
    out: I64 = _CACHE["hists"](ids, g, columns.cls, columns.val, columns.cnt, columns.n_columns)
    return out


class Rules(NamedTuple):
    """The models as the compiled judge reads them: per model its first column and number of
    columns in the side-by-side counts (``offs``, ``widths``), the whole table's records in
    them (``n_total``), its parameters (``params[param_off[q]:param_off[q + 1]]``); the whole
    table's count per column."""

    offs: I64
    widths: I64
    n_total: I64
    params: npt.NDArray[np.float64]
    param_off: I64
    table_counts: I64


class Judge(NamedTuple):
    """The compiled judge of a set of models (:func:`judge_of`).

    Attributes
    ----------
    judge : callable
        ``judge(sizes, hist, n_classes, mcs, rules, bad) -> records of the failing classes``,
        compiled: sets ``bad[c]`` for each class ``c < n_classes`` below ``mcs`` or failing a
        model; ``hist`` holds each class's counts in the side-by-side columns.
    function : callable
        The same judge for compiled callers (registered with numba, not compiled alone).
    name : str
        A digest of the rules' code: a compiled caller of ``function`` is named with it
        (:func:`named`).
    rules : Rules
    """

    judge: Callable[..., int]
    function: Callable[..., int]
    name: str
    rules: Rules


def _none_left(sizes, hist, nk, rules, bad):
    """The end of a chain of models (:func:`_chain`)."""
    return None


def _chain(rule, q, rest):
    """Model ``q`` judges the classes ``0..nk-1`` not yet known to fail (``bad``) with its
    rule, on its columns of ``hist``; then the models after it (``rest``)."""

    def judge_from(sizes, hist, nk, rules, bad):
        a = rules.offs[q]
        b = a + rules.widths[q]
        table, n_total = rules.table_counts[a:b], rules.n_total[q]
        params = rules.params[rules.param_off[q] : rules.param_off[q + 1]]
        for c in range(nk):
            if not bad[c] and not rule(sizes[c], hist[c, a:b], table, n_total, params):
                bad[c] = True
        rest(sizes, hist, nk, rules, bad)

    return judge_from


def _judge_with(chain):
    def judge(sizes, hist, nk, mcs, rules, bad):
        for c in range(nk):
            bad[c] = sizes[c] < mcs
        chain(sizes, hist, nk, rules, bad)
        rows = np.int64(0)
        for c in range(nk):
            if bad[c]:
                rows += sizes[c]
        return rows

    return judge


def _registered(f: Callable[..., Any], inline: bool = True) -> Callable[..., Any]:
    """``f`` made callable from compiled code, inlined where it is called unless not
    ``inline`` (once per function; the function itself)."""
    if f not in _REGISTERED:
        numba().extending.register_jitable(inline="always" if inline else "never")(f)
        _REGISTERED.add(f)
    return f


def named(fn: Any, *content: object) -> Any:
    """``fn`` with a digest of ``content`` added to its qualified name. numba names compiled
    code by qualified name and a number counted per process, so that closures of one name
    cached on disk by other processes would be taken for one another, and a rule's new code
    would be read from the cache as the old: a closure is named after the code it holds."""
    fn.__qualname__ += "_" + hashlib.sha256(repr(content).encode()).hexdigest()[:16]
    return fn


def _compiled(functions: tuple[Callable[..., bool], ...]) -> tuple[Any, Any, str]:
    """The judge of these rules: compiled, registered, and its name (once per process and
    sequence of rules; numba caches the machine code on disk)."""
    key = ("judge", functions)
    if key not in _CACHE:
        code = [repr((f.__module__, f.__qualname__, f.__code__.co_code, f.__code__.co_consts))
                for f in functions]  # fmt: skip
        chain = _registered(_none_left, inline=False)
        for q in reversed(range(len(functions))):
            link = _chain(_registered(functions[q]), q, chain)
            chain = _registered(named(link, q, code[q:]), inline=False)
        judge = _registered(named(_judge_with(chain), code), inline=False)
        name = hashlib.sha256(repr(code).encode()).hexdigest()[:16]
        _CACHE[key] = (jit(judge), judge, name)
    return _CACHE[key]  # type: ignore[no-any-return]


def judge_of(
    models: Sequence[PrivacyModel], columns: SensitiveColumns, n_rows: int
) -> Judge | None:
    """The compiled judge of ``models`` built from their rules
    (:meth:`~anonlab.models.base.PrivacyModel.class_rule`), or None if one of them has no
    rule or reads several sensitive attributes (then the models judge themselves).

    Parameters
    ----------
    models : sequence of PrivacyModel
    columns : SensitiveColumns
        The side-by-side columns the judge reads (each model's sensitive attribute among
        them) and the whole table's counts in them.
    n_rows : int
        The whole table's records.

    Returns
    -------
    Judge or None
    """
    rules = [m.class_rule() for m in models]
    if any(r is None or len(m.sensitive_attributes) > 1 for r, m in zip(rules, models)):
        return None
    offs: list[int] = []
    widths: list[int] = []
    n_total: list[int] = []
    params: list[float] = []
    param_off = [0]
    for m, r in zip(models, rules):
        assert r is not None
        attr = m.sensitive_attributes
        off, width = columns.layout[attr[0]] if attr else (0, 0)
        offs.append(off)
        widths.append(width)
        n_total.append(int(columns.total[off : off + width].sum()) if width else int(n_rows))
        params.extend(r.params)
        param_off.append(len(params))
    record = Rules(
        offs=np.asarray(offs, dtype=np.int64),
        widths=np.asarray(widths, dtype=np.int64),
        n_total=np.asarray(n_total, dtype=np.int64),
        params=np.asarray(params, dtype=np.float64),
        param_off=np.asarray(param_off, dtype=np.int64),
        table_counts=np.ascontiguousarray(columns.total, dtype=np.int64),
    )
    judge, function, name = _compiled(tuple(r.function for r in rules if r is not None))
    return Judge(judge, function, name, record)
