"""The block run: out of core, a row-placing algorithm block by block.

The engine streams the table sorted on its quasi-identifiers (ascending cardinality, then
each value's place in its hierarchy: Murakami & Uno, section 3.2.3) in blocks of
``block_rows`` rows; each block, encoded with the whole table's labels, is anonymized in
memory by the algorithm and verified by :func:`~anonlab.release.verify.verify` before its
labels are staged; a block that cannot be anonymized on its own (fewer rows than k, a
sensitive share above alpha: paper 002's Lemma 1) is anonymized with the next. Each block
may suppress its share of the job's limit (``floor(suppression * rows)``), so the total stays
within it. With a per-record model the verified blocks are held in files until every block
is done (:class:`~anonlab.release.partitioned.HeldBlocks`): the classes whose labels occur in
several blocks are judged merged, and the algorithm releases again the values of those that
fail, as in memory, before any block is staged. The union is then written in the source's
order and re-checked (:func:`anonlab.jobs.union.write_union`);
:mod:`anonlab.release.partitioned` gives the union argument and refuses the models it does
not cover. The result holds a :class:`~anonlab.release.result.BlockSummary`, not a recoding.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from anonlab._progress import stage
from anonlab._threads import single_threaded_blas
from anonlab.algorithms.base import Anonymizer
from anonlab.data.table import EncodedTable
from anonlab.engines import Engine
from anonlab.exceptions import DataFormatError, ParameterError
from anonlab.io.job import JobSpec
from anonlab.io.temporary import temporary_folder
from anonlab.jobs import engines
from anonlab.jobs.base import Released, Task
from anonlab.jobs.identifying import refuse_identifiers
from anonlab.jobs.limits import read_limits
from anonlab.jobs.problem import build_problem, job_models
from anonlab.jobs.union import write_union
from anonlab.models.per_record import RecordModel
from anonlab.release import Problem
from anonlab.release.partitioned import (
    DEFAULT_BLOCK_ROWS,
    BlockRelease,
    HeldBlocks,
    PartitionStats,
    block_ready,
    check_union,
    merge_summaries,
    release_block,
)
from anonlab.release.result import BlockSummary, SearchStats

__all__ = ["Blocks"]


class Blocks:
    """A job run out of core block by block (the row-placing algorithms).

    Parameters
    ----------
    task : Task
    engine : Engine
        An open out-of-core engine that runs partitions.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.engines import open_engine
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}],
    ...                 "algorithm": "top_down"})
    >>> data = pd.DataFrame({"sex": ["F", "M"] * 6})
    >>> task = Task(data, job, build_anonymizer("top_down"), None, (), block_rows=4)
    >>> run = Blocks(task, open_engine(data, job, "duckdb"))
    >>> problem = run.problem()
    >>> released = run.write(problem, run.release(problem))
    >>> released.blocks.blocks, released.verified().verification.suppressed_rows
    (3, 0)
    >>> run.close()
    """

    label: ClassVar[str] = "blocks"

    def __init__(self, task: Task, engine: Engine) -> None:
        self.task = task
        self.engine = engine
        self.rows = _block_rows(task)
        self._blocks: list[BlockRelease] = []
        self._merged = 0
        self._held: HeldBlocks | None = None
        self._start = 0.0

    @classmethod
    def fits(cls, algorithm: Anonymizer, engine: type[Engine]) -> bool:
        """An out-of-core engine and an algorithm that runs partition by partition."""
        return not engine.in_memory and algorithm.accepts_partitions()

    @classmethod
    def refuse(cls, task: Task) -> None:
        """Refuse, before the engine opens, a model that the union of blocks may violate
        (:func:`~anonlab.release.partitioned.check_union`) and blocks of fewer rows than
        the models' k."""
        models = job_models(task.spec)
        check_union(models, task.algorithm.name)
        k = max([m.min_class_size for m in models] + [2])
        rows = _block_rows(task)
        if rows < k:
            raise ParameterError(
                f"The 'block_rows' option (--block-rows) must be at least the models' k = {k}: "
                f"each block is anonymized on its own. Got {rows} instead. Nothing was written."
            )

    @classmethod
    def open(cls, task: Task, engine_options: Mapping[str, Any] | None = None) -> Self:
        """A run of ``task`` over its engine, opened (:func:`anonlab.jobs.engines.open_engine`)."""
        return cls(task, engines.open_engine(task.data, task.spec, task.engine, engine_options))

    def problem(self) -> Problem:
        """The whole table's frequency set (with its limit column) bound to the job."""
        whole = build_problem(None, self.task.spec, engine=self.engine, per_partition=True)
        refuse_identifiers(whole, self.task.spec, self.engine)
        return whole

    def release(self, problem: Problem) -> Released:
        """Anonymize and verify each block, staging its labels (or holding it, with a
        per-record model, until the classes spanning blocks are judged merged)."""
        task, engine, whole, rows = self.task, self.engine, problem, self.rows
        table = whole.table
        columns = list(table.names)
        total = max(math.ceil(whole.n_records / rows), 1)
        stage(task.progress, f"sorting {whole.n_records:,} rows into blocks of {rows:,}")
        engine.clear_staged()
        self._start = time.perf_counter()
        stream = engine.partitions(
            columns,
            categories={c: table.column(c).categories for c in columns},
            order_by={q: whole.hierarchies[q] for q in whole.sort_order},
            block_rows=rows,
        )
        per_record = any(isinstance(m, RecordModel) for m in whole.models)
        # One block at a time (benchmarks/README.md: blocks in processes gained nothing).
        with temporary_folder("anonlab-blocks") as folder:  # (0700, removed by a next run)
            held = self._held = HeldBlocks(whole, Path(folder)) if per_record else None
            with single_threaded_blas():
                for rows_of, block, joined in _ready_blocks(stream, whole, task.spec):
                    out = _solve_block(task.algorithm, block, rows_of)
                    self._merged += joined
                    stage(
                        task.progress,
                        f"block {len(self._blocks) + 1} of about {total} done "
                        f"({out.n_rows:,} rows)",
                    )
                    if held is None:
                        engine.stage_labels(out.rows, out.labels, out.keep)
                    else:  # staged once the classes spanning blocks are known
                        held.hold(out, block)
                    out.forget_rows()  # only the block's figures stay in memory
                    self._blocks.append(out)
                    if task.progress is not None:
                        task.progress(1, total)
            if held is not None:
                stage(task.progress, "judging the classes that span blocks, merged")
                held.stage(engine, task.algorithm)
        if not self._blocks:  # pragma: no cover - build_problem refuses an empty table
            raise DataFormatError("The table is empty: it has no rows. Nothing was written.")
        return Released(None, None, SearchStats(0.0, 0), self._summary())

    def write(self, problem: Problem, released: Released) -> Released:
        """Write the union in the source's order, re-check it; the run's figures."""
        task, blocks, held = self.task, self._blocks, self._held
        release, spanning = write_union(self.engine, problem, task, blocks)
        sizes = [b.n_rows for b in blocks]
        search = PartitionStats(
            elapsed_s=time.perf_counter() - self._start,
            evaluated=sum(b.search.evaluated for b in blocks),
            blocks=len(blocks),
            block_rows=self.rows,
            smallest_block=min(sizes),
            largest_block=max(sizes),
            merged_blocks=self._merged,
            spanning_classes=spanning,
            rejoined_classes=0 if held is None else held.rejoined_classes,
            rejoined_records=0 if held is None else held.rejoined_records,
            per_block=[
                {
                    "rows": b.n_rows,
                    "seconds": round(b.seconds, 4),
                    "suppressed_rows": b.verification.suppressed_rows,
                    "loss": b.loss,
                    "search": b.search.to_dict(),
                }
                for b in blocks
            ],
        )
        return Released(release, None, search, released.blocks)

    @property
    def blocks(self) -> list[BlockRelease]:
        """The blocks anonymized and verified so far, in order."""
        return self._blocks

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()

    def _summary(self) -> BlockSummary:
        """The blocks and their recodings' summaries, counts summed."""
        summaries: dict[str, Any] = {}
        for b in self._blocks:
            merge_summaries(summaries, b.summary)
        kind = self._blocks[0].kind
        return BlockSummary(self.task.algorithm.name, kind, len(self._blocks), self.rows, summaries)


def _block_rows(task: Task) -> int:
    """The rows per block: the job's, else the algorithm's own
    (:attr:`~anonlab.algorithms.base.Anonymizer.block_rows`), else
    :data:`~anonlab.release.partitioned.DEFAULT_BLOCK_ROWS`."""
    if task.block_rows is not None:
        return int(task.block_rows)
    own = type(task.algorithm).block_rows
    return DEFAULT_BLOCK_ROWS if own is None else int(own)


def _solve_block(
    algorithm: Anonymizer, problem: Problem, rows: npt.NDArray[np.int64]
) -> BlockRelease:
    """Anonymize one block in memory and verify it (the release layer's check)."""
    t0 = time.perf_counter()
    algorithm.fit(problem)
    out = release_block(
        problem, algorithm.recoding_, rows, search=algorithm.search_, context=algorithm.context_
    )
    out.seconds = time.perf_counter() - t0
    return out


_Block = tuple[npt.NDArray[np.int64], EncodedTable, int]
_Ready = tuple[npt.NDArray[np.int64], Problem, int]


def _ready_blocks(
    stream: Iterable[tuple[npt.NDArray[np.int64], EncodedTable]], whole: Problem, spec: JobSpec
) -> Iterator[_Ready]:
    """The blocks to anonymize: ``(rows, problem, blocks joined)``, rows in source order.

    A block that is not ready on its own (:func:`~anonlab.release.partitioned.block_ready`)
    is joined to the next; the last block, if not ready, to the one before it (one block is
    held back for that).
    """
    held: _Ready | None = None
    pending: _Block | None = None
    need = max([m.min_class_size for m in whole.models] + [1])
    for rows, table in stream:
        joined = 0
        if pending is not None:
            rows, table = _concat(pending[0], pending[1], rows, table)
            joined = pending[2] + 1
            pending = None
        small = table.n_rows < need  # too few rows for a Problem of its own
        problem = None if small else _block_problem(whole, spec, rows, table)
        if problem is None or not block_ready(problem):
            pending = (rows, table, joined)
            continue
        if held is not None:
            yield held
        held = (_source_order(rows), problem, joined)
    if pending is not None:
        if held is not None:
            rows, table = _concat(held[0], held[1].table, pending[0], pending[1])
            held = (
                _source_order(rows),
                _block_problem(whole, spec, rows, table),
                held[2] + pending[2] + 1,
            )
        else:
            held = (
                _source_order(pending[0]),
                _block_problem(whole, spec, pending[0], pending[1]),
                pending[2],
            )
    if held is not None:
        yield held


def _source_order(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """A block's rows in source order (its table is put in the same order)."""
    return np.sort(rows)


def _concat(
    rows_a: npt.NDArray[np.int64], a: EncodedTable, rows_b: npt.NDArray[np.int64], b: EncodedTable
) -> tuple[npt.NDArray[np.int64], EncodedTable]:
    """Two blocks as one (their columns share the whole table's labels)."""
    cols = tuple(
        dataclasses.replace(ca, codes=np.concatenate([ca.codes, b[ca.name].codes]))
        for ca in a.columns
    )
    return np.concatenate([rows_a, rows_b]), EncodedTable(cols, source=a.source)


def _block_problem(
    whole: Problem, spec: JobSpec, rows: npt.NDArray[np.int64], table: EncodedTable
) -> Problem:
    """The problem of one block: its rows in source order, the whole problem's hierarchies,
    models and metric, its share of the suppression limit and its rows' limits."""
    order = np.argsort(rows, kind="stable")
    cols = tuple(dataclasses.replace(c, codes=c.codes[order]) for c in table.columns)
    block = EncodedTable(cols, source=table.source).with_schema(whole.table.schema)
    record: dict[str, npt.NDArray[np.float64]] = {}
    if whole.record_parameters:
        assert spec.personalized is not None
        limits = read_limits(block, spec.personalized)
        record = {name: limits for name in whole.record_parameters}
    return dataclasses.replace(
        whole,
        table=block,
        max_suppressed=int(math.floor(spec.suppression * block.n_records + 1e-9)),
        record_parameters=record,
    )
