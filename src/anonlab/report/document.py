"""What a report shows: the answers and results it renders, gathered before rendering.

:func:`anonlab.api.report_data` asks every question a report needs through the API and puts
the answers here; :func:`anonlab.report.html.render` lays them out. Nothing in this module
computes a figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from anonlab.diagnosis import (
    QuasiIdentifierReport,
    ReleaseProfile,
    RiskSummary,
    SearchAnswer,
    SubsetAnswer,
    TableAnswer,
    TableProfile,
)

__all__ = ["Candidate", "ExploreData", "JobFigures", "ReportData"]


@dataclass
class JobFigures:
    """An anonymization job and what it did.

    Attributes
    ----------
    job_text : str
        The job as YAML (what ``--job`` reads).
    job_source : str or None
        The job file, if the job came from one.
    before : CheckReport
        The models and the metric of the table as it is (:func:`anonlab.check`).
    before_risk : RiskSummary
        The classes of the table as it is under the job's quasi-identifiers.
    result : AnonymizationResult
        The verified release (:func:`anonlab.anonymize`).
    release : ReleaseProfile
        Its classes, sensitive distributions and loss per attribute.
    after_risk : RiskSummary, optional
        The classes of the release's labels under the job's quasi-identifiers (with the
        population told as for ``before_risk``).
    utility : UtilityProfile, optional
        What the release keeps, per attribute and in words.
    classification : ClassificationUtility, optional
        How well the release still predicts the attribute asked for.
    after_disclosure : list of AttributeDisclosure
        Per sensitive attribute, the released classes whose records share one value (the
        table's before: ``before.disclosure``).
    """

    job_text: str
    job_source: str | None
    before: Any
    before_risk: RiskSummary
    result: Any
    release: ReleaseProfile
    after_risk: RiskSummary | None = None
    after_disclosure: list[Any] = field(default_factory=list)
    utility: Any = None
    classification: Any = None


@dataclass
class ReportData:
    """Every answer a diagnosis report shows.

    Attributes
    ----------
    title : str
    data_argument : str or None
        The data as the command line names it (a path), or None for a table from Python.
    options : list of str
        Command-line options that shape the data (``--drop-missing``).
    profile : TableProfile
    quasi_identifiers : list of str
        The set S diagnosed.
    k : int
        The k of the subset search (Q3).
    q2 : SubsetAnswer
        For which k (Q2).
    risk : RiskSummary
        Prosecutor risk and the class-size histogram.
    q11 : TableAnswer
        The smallest delta for k = 1..max_k (Q11).
    q4 : TableAnswer
        k of every subset of S (Q4).
    q3 : SearchAnswer
        The largest k-anonymous subsets of S (Q3).
    singling_out : QuasiIdentifierReport
        The minimal attribute sets that single people out.
    suda : SudaResult, optional
        SUDA2 on S: each record's SUDA and DIS scores.
    disclosure : list of AttributeDisclosure
        Per sensitive attribute, the classes of S whose records share one value.
    population_options : list of str
        The command-line options that told the population (``--sampling-fraction 0.01``),
        for the risk command and the report's.
    job : JobFigures or None
    warnings : list of str
        Warnings raised while answering (identifying columns, ...).
    version : str
        The anonlab version that made the report.
    """

    title: str
    data_argument: str | None
    options: list[str]
    profile: TableProfile
    quasi_identifiers: list[str]
    k: int
    q2: SubsetAnswer
    risk: RiskSummary
    q11: TableAnswer
    q4: TableAnswer
    q3: SearchAnswer
    singling_out: QuasiIdentifierReport
    suda: Any = None
    disclosure: list[Any] = field(default_factory=list)
    population_options: list[str] = field(default_factory=list)
    job: JobFigures | None = None
    warnings: list[str] = field(default_factory=list)
    version: str = ""


@dataclass
class Candidate:
    """One candidate release of :func:`anonlab.api.explore`.

    Attributes
    ----------
    k : int
        The k of its k-anonymity.
    algorithm : str
    loss : float or None
        Its loss on the common measure (GCP: 0 keeps every value, 1 generalizes every
        cell to the root or suppresses it); None when the algorithm refused the job.
    suppressed : int
        Rows suppressed.
    risk : RiskSummary or None
        The risk of its quasi-identifiers' released labels.
    seconds : float
        The time it took.
    refused : str or None
        Why the algorithm did not run the job (one line).
    frontier : bool
        Whether no other candidate has both less loss and less average risk (and is better
        on one of them).
    release, report, job : str or None
        Its files, relative to the explore page (when written).
    k_after : int or None
        Its k as the verification found it (a cell cover's: its anonymity graph's).
    cover : bool
        Whether it is a cell cover (its risk, of identical released rows, is an upper bound).
    accuracy : dict, optional
        With a classification target: per classifier, its accuracy trained on the data and
        on the release (:class:`~anonlab.diagnosis.utility.ClassificationUtility`).

    Examples
    --------
    >>> Candidate(5, "optimal", 0.2, 10, None, 0.1).refused is None
    True
    """

    k: int
    algorithm: str
    loss: float | None
    suppressed: int
    risk: RiskSummary | None
    seconds: float
    refused: str | None = None
    frontier: bool = False
    release: str | None = None
    report: str | None = None
    job: str | None = None
    k_after: int | None = None
    cover: bool = False
    accuracy: dict[str, dict[str, float]] | None = None


@dataclass
class ExploreData:
    """The candidates of :func:`anonlab.api.explore` and what they were asked.

    Examples
    --------
    >>> ExploreData("adult.csv", "job.yaml", [], None).candidates
    []
    """

    data_argument: str | None
    job_source: str | None
    candidates: list[Candidate]
    sampling_fraction: float | None
    title: str = "Candidate releases"
    version: str = ""
