"""The union of a block run's verified blocks: written in the source's order, re-checked.

A class-forming release (hierarchy labels, Mondrian's regions, centroids) is grouped again
from the written file and every class model judges the union's classes
(:func:`~anonlab.release.recheck_written`); a per-record model judges again the records of
the classes that span blocks; a release with blanks has every written record's compatible
records counted again from the file (:func:`~anonlab.release.blanks.recheck_blanks`, a
blank matching any value); a cell cover was verified block by block on its anonymity graph,
and the written file must hold every block's staged labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from anonlab._progress import stage
from anonlab.data.stats import ClassStats
from anonlab.data.table import LabelColumns
from anonlab.engines import Engine
from anonlab.engines.base import RowsPlan
from anonlab.exceptions import PrivacyCheckError
from anonlab.io.atomic import output_format, readable_atomic_write
from anonlab.io.job import JobSpec
from anonlab.io.temporary import temporary_folder
from anonlab.jobs.base import Task
from anonlab.jobs.limits import read_limits
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel
from anonlab.release import Problem, recheck_written
from anonlab.release.blanks import BLANKS_K, recheck_blanks
from anonlab.release.partitioned import (
    BlockRelease,
    centroid_union_loss,
    combine_verifications,
    spanning_verdict,
    union_loss,
    union_release,
)
from anonlab.release.verify import Release, Verification

__all__ = ["write_union"]


def write_union(
    engine: Engine, whole: Problem, task: Task, blocks: list[BlockRelease]
) -> tuple[Release, int]:
    """Write the union of the verified blocks in the source's order and re-check it.

    The written file (or, without ``output``, the released quasi-identifiers and sensitive
    attributes in a temporary Parquet file) must hold exactly the staged labels
    (:meth:`~anonlab.engines.base.Engine.staged_mismatches`); a class-forming release is
    grouped again and every class model judges the union's classes
    (:func:`~anonlab.release.recheck_written`), a per-record model judges again the records
    of classes that span blocks; a release with blanks is counted again under wildcard
    matching (:func:`~anonlab.release.blanks.recheck_blanks`); a cell cover was verified
    block by block on its anonymity graph. A failure raises :class:`~anonlab.exceptions.PrivacyCheckError` and nothing is
    written.

    Parameters
    ----------
    engine : Engine
        The engine that staged the blocks' labels.
    whole : Problem
        The whole table's problem (its frequency set).
    task : Task
        The job, the output (None: a temporary file, removed), the files to protect.
    blocks : list of BlockRelease
        The verified blocks, their labels staged.

    Returns
    -------
    Release
        The union's release (its rows in the written file).
    int
        The classes spanning blocks.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.blocks import Blocks
    >>> from anonlab.jobs.engines import open_engine
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}],
    ...                 "algorithm": "top_down"})
    >>> data = pd.DataFrame({"sex": ["F", "M"] * 6})
    >>> task = Task(data, job, build_anonymizer("top_down"), None, (), block_rows=4)
    >>> run = Blocks(task, open_engine(data, job, "duckdb"))
    >>> whole = run.problem()
    >>> _ = run.release(whole)
    >>> release, spanning = write_union(run.engine, whole, task, run.blocks)
    >>> release.verification.classes, spanning
    (2, 2)
    >>> run.close()
    """
    spec, output, protect, progress = task.spec, task.output, task.protect, task.progress
    mask = task.mask
    qis = whole.quasi_identifiers
    replaced = blocks[0].replaced
    hidden = set(spec.identifiers) | set(whole.identifiers)
    class_models = [m for m in whole.models if not isinstance(m, RecordModel)]
    sensitive = sorted({a for m in class_models for a in m.sensitive_attributes})
    if output is None:
        columns = tuple(dict.fromkeys([*qis, *replaced, *sensitive]))
    else:
        columns = tuple(c for c in engine.columns if c not in hidden)
    plan = RowsPlan(columns, replaced, qis, mask)
    forms_classes = blocks[0].verifier not in ("graph", "blanks")
    fmt = "parquet" if output is None else output_format(output)
    separator = spec.csv.separator
    stage(progress, "writing" if output is None else f"writing {Path(output).name}")

    written = _Written(plan, fmt, separator, sensitive)

    def write_and_check(target: Path) -> tuple[Release, int]:
        return _check_union(engine, whole, task, blocks, written, target, forms_classes)

    if output is not None:
        with readable_atomic_write(output, protect=protect) as target:
            return write_and_check(target)
    with temporary_folder("anonlab-release") as folder:  # (0700, removed by a next run if killed)
        return write_and_check(folder / "release.parquet")


@dataclass(frozen=True)
class _Written:
    """How the union is written: the rows' plan, the format, the separator, and the
    sensitive attributes the written file is grouped with again."""

    plan: RowsPlan
    fmt: str
    separator: str
    sensitive: list[str]


def _check_union(
    engine: Engine,
    whole: Problem,
    task: Task,
    blocks: list[BlockRelease],
    how: _Written,
    target: Path,
    forms_classes: bool,
) -> tuple[Release, int]:
    """Write the staged release to ``target`` and re-check it (see :func:`write_union`)."""
    plan, fmt, separator = how.plan, how.fmt, how.separator
    engine.write_staged_release(plan, target, fmt=fmt, separator=separator)
    stage(task.progress, "re-checking the written release")
    wrong = engine.staged_mismatches(plan, target, fmt=fmt, separator=separator)
    if wrong:
        raise PrivacyCheckError(
            f"Re-check of the written release failed: {wrong} rows do not hold the verified "
            "labels of their block. Nothing was released."
        )
    qis = list(whole.quasi_identifiers)
    written = engine.release_stats(
        target, fmt=fmt, quasi_identifiers=qis, sensitive=how.sensitive, separator=separator
    )
    suppressed = sum(b.verification.suppressed_rows for b in blocks)
    if suppressed > whole.max_suppressed:  # pragma: no cover - each block takes its share
        raise PrivacyCheckError(
            f"Re-check failed: the blocks suppressed {suppressed} rows, more than the limit "
            f"of {whole.max_suppressed}. Nothing was released."
        )
    spanning = 0
    kind = blocks[0].verifier
    metric = whole.metric.name
    if kind == "blanks":
        verification, loss = _union_of_blanks(whole, blocks, written)
        spanning = _check_spanning(engine, whole, task.spec, plan)
    elif kind == "centroids":
        verification, _ = _union_of_classes(whole, task.mask, blocks, written, suppressed)
        stage(task.progress, "measuring the classes that span blocks, merged")
        qis = list(whole.quasi_identifiers)
        categories = {q: whole.table.column(q).categories for q in qis}
        spanning, row_class, original, labels = engine.staged_spanning(plan, qis, categories)
        parts = [b.centroids for b in blocks if b.centroids is not None]
        loss, metric = centroid_union_loss(whole, parts, row_class, original, labels), "gcp"
    elif forms_classes:
        verification, classes = _union_of_classes(whole, task.mask, blocks, written, suppressed)
        if kind == "regions":  # a cell's NCP is read from its label alone: blocks add up
            loss = _additive_loss(whole, blocks)
        else:
            supp = np.concatenate([b.suppressed_sizes for b in blocks])
            cells = [b.cells for b in blocks if b.cells is not None]
            loss = union_loss(whole, cells, classes, supp)
        stage(task.progress, "judging the classes that span blocks")
        spanning = _check_spanning(engine, whole, task.spec, plan)
    else:
        method = (
            f"each of {len(blocks)} blocks: {blocks[0].verification.method}; the union of "
            "k-regular covers is k-regular, and the written file holds every block's labels"
        )
        verification = combine_verifications(whole, blocks, written.n_classes, method)
        loss = _additive_loss(whole, blocks)
    columns = LabelColumns([], None)
    return union_release(columns, verification, loss, metric, written), spanning


def _additive_loss(whole: Problem, blocks: list[BlockRelease]) -> float:
    """The union's NCP or GCP when each cell's NCP depends on its label and the whole
    table's domain alone (a cell cover, regions): the blocks' NCP summed, or their GCP
    weighted by their rows."""
    n = whole.n_records
    if whole.metric.name == "ncp":
        return float(sum(b.loss for b in blocks))
    return sum(b.loss * b.n_rows for b in blocks) / n if n else 0.0  # gcp: a mean over rows


def _union_of_blanks(
    whole: Problem, blocks: list[BlockRelease], written: ClassStats
) -> tuple[Verification, float]:
    """A union of releases with blanks: every written record's compatible records counted
    again from the written file's distinct tuples (:func:`~anonlab.release.blanks
    .recheck_blanks`, a blank matching any value); its verification and its loss, the
    blocks' cells counted against the whole table, the classes those of the written
    labels."""
    k_after = recheck_blanks(whole, written)
    method = (
        f"each of {len(blocks)} blocks: {blocks[0].verification.method}; the union: "
        "wildcard frequencies recounted from the written release's distinct tuples"
    )
    verification = combine_verifications(whole, blocks, written.n_classes, method)
    verification.k_after, verification.k_meaning = k_after, BLANKS_K
    sizes = np.asarray(written.sizes, dtype=np.int64)
    cells = [b.cells for b in blocks if b.cells is not None]
    return verification, union_loss(whole, cells, sizes, np.zeros(0, dtype=np.int64))


def _union_of_classes(
    whole: Problem, mask: bool, blocks: list[BlockRelease], written: ClassStats, suppressed: int
) -> tuple[Verification, npt.NDArray[np.int64]]:
    """A class-forming union: the written release grouped again, every class model judging
    its classes (:func:`~anonlab.release.recheck_written`); its verification and the sizes
    of its released classes."""
    classes = _released_classes(written, suppressed, mask)
    method = (
        f"each of {len(blocks)} blocks: {blocks[0].verification.method}; the union: the "
        "written release grouped again, every model judged its classes"
    )
    verification = combine_verifications(whole, blocks, written.n_classes, method)
    recheck_written(
        whole.with_models(_class_models(whole)), written, verification, mask_suppressed=mask
    )
    verification.classes = int(classes.size)
    verification.k_after = int(classes.min()) if classes.size else 0
    return verification, classes


def _class_models(problem: Problem) -> list[PrivacyModel]:
    """The models that judge classes (a per-record model is judged record by record)."""
    return [m for m in problem.models if not isinstance(m, RecordModel)]


def _released_classes(written: ClassStats, suppressed: int, mask: bool) -> npt.NDArray[np.int64]:
    """The sizes of the union's released classes: the written classes, without the rows
    masked as suppressed (they are counted as the blocks' suppressed classes)."""
    sizes = np.asarray(written.sizes, dtype=np.int64).copy()
    if mask and suppressed and written.n_classes:
        stars = np.array([all(x == "*" for x in key) for key in written.key_labels()], dtype=bool)
        sizes[stars] -= suppressed
    out: npt.NDArray[np.int64] = sizes[sizes > 0]
    return out


def _check_spanning(engine: Engine, whole: Problem, spec: JobSpec, plan: RowsPlan) -> int:
    """Judge again, record by record, the classes that span blocks (per-record models:
    merging classes may raise a record's leakage); return how many classes span blocks."""
    record = [m for m in whole.models if isinstance(m, RecordModel)]
    columns = list(whole.table.names) if record else []
    categories = {c: whole.table.column(c).categories for c in columns}
    n, row_class, original, released = engine.staged_spanning(plan, columns, categories)
    if not record or not n:
        return n
    assert spec.personalized is not None
    limits = read_limits(original.with_schema(whole.table.schema), spec.personalized)
    for m in record:
        verdict = spanning_verdict(
            m, row_class, original[m.attribute], released[m.attribute], limits
        )
        if not bool(verdict.ok.all()):
            bad = int(np.unique(row_class[~verdict.ok]).size)
            raise PrivacyCheckError(
                f"Re-check failed: {bad} of the {n} classes whose labels occur in several "
                f"blocks hold records over their leakage limit once merged "
                f"({verdict.violating.size} records). Nothing was released."
            )
    return n
