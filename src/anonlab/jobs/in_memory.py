"""The in-memory run: the table's rows in memory, the algorithm fits them whole."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from anonlab._progress import stage
from anonlab.algorithms.base import Anonymizer
from anonlab.engines import Engine
from anonlab.io.writers import write_table
from anonlab.jobs.base import Released, Task, fit_and_verify
from anonlab.jobs.identifying import refuse_identifiers
from anonlab.jobs.problem import build_problem
from anonlab.release import Problem

__all__ = ["InMemory"]


class InMemory:
    """A job run on the table in memory (the numpy engine): read, fit, verify, write.

    Parameters
    ----------
    task : Task

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.problem import load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]})
    >>> run = InMemory(Task(t, job, build_anonymizer("optimal"), None, ()))
    >>> problem = run.problem()
    >>> run.write(problem, run.release(problem)).verified().verification.k_after
    5
    """

    label: ClassVar[str] = "in memory"

    def __init__(self, task: Task) -> None:
        self.task = task

    @classmethod
    def fits(cls, algorithm: Anonymizer, engine: type[Engine]) -> bool:
        """Every algorithm runs on an engine that holds the rows in memory."""
        del algorithm
        return engine.in_memory

    @classmethod
    def refuse(cls, task: Task) -> None:
        """Nothing to refuse before reading: the table is read whole."""
        del task

    @classmethod
    def open(cls, task: Task, engine_options: Mapping[str, Any] | None = None) -> Self:
        """A run of ``task`` (no engine to open: ``engine_options`` are unused)."""
        del engine_options
        return cls(task)

    def problem(self) -> Problem:
        """The table read whole, bound to the job; the algorithm's parameters checked
        against it (a bad parameter is said first, as ``validate_job`` says it), then the
        undeclared identifying columns refused."""
        problem = build_problem(self.task.data, self.task.spec)
        self.task.algorithm.check(problem)
        refuse_identifiers(problem, self.task.spec)
        return problem

    def release(self, problem: Problem) -> Released:
        """Fit the algorithm and verify its release."""
        return fit_and_verify(self.task.algorithm, problem, self.task)

    def write(self, problem: Problem, released: Released) -> Released:
        """Write the verified table to the output, atomically (if one is asked for)."""
        del problem
        task = self.task
        if task.output is not None:
            write_table(
                released.verified().columns,
                task.output,
                separator=task.spec.csv.separator,
                protect=task.protect,
                status=lambda m: stage(task.progress, m),
            )
        return released

    def close(self) -> None:
        """Nothing held."""
