"""Reports: results turned into titled tables that a terminal, JSON or HTML can show.

The report module renders results; it never recomputes them. Every function returns a list
of :class:`Section` (a title, a header, rows of text, notes); the command line prints them
with Rich, and any other front end can lay them out its own way. Anonymization results are
rendered from their typed statistics, so a new algorithm needs no code here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anonlab.diagnosis import SubsetAnswer, TableAnswer

__all__ = [
    "Section",
    "anonymization_sections",
    "check_sections",
    "diagnosis_sections",
    "disclosure_section",
    "print_plain",
    "risk_comparison_section",
    "sample_risk_sections",
    "suda_section",
]


@dataclass
class Section:
    """A titled table.

    Attributes
    ----------
    title : str
    header : list of str, optional
        Column names; None for a two-column ``label: value`` table.
    rows : list of list of str
    notes : list of str
        Lines printed after the table.
    numeric : list of bool
        Per column, whether it holds numbers (right-aligned).

    Examples
    --------
    >>> section = Section("Classes", ["class size", "classes"], [["1", "2"], ["2", "1"]])
    >>> print(print_plain([section]), end="")
    Classes
    class size | classes
    1 | 2
    2 | 1
    """

    title: str
    header: list[str] | None = None
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    numeric: list[bool] = field(default_factory=list)


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _delta(d: float) -> str:
    return f"{d:.4f}"


# ------------------------------------------------------------------ diagnosis
def diagnosis_sections(
    result: Any, title: str | None = None, *, limit: int | None = 60
) -> list[Section]:
    """Sections of a diagnosis answer (Q1-Q12, a risk summary, QI discovery).

    Parameters
    ----------
    result : answer
        What :func:`anonlab.diagnose`, :func:`anonlab.risk` or
        :func:`anonlab.find_quasi_identifiers` returned.
    title : str, optional
        The title of the first section.
    limit : int or None
        Rows of a table answer (Q4, Q8, Q10-Q12) shown; None shows all.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
    >>> sections = diagnosis_sections(anonlab.diagnose(t, quasi_identifiers=["zip"]))
    >>> print(print_plain(sections), end="")
    Q2: k-anonymity of S
    S | zip
    rows | 3
    k | 1
    delta | 0.0000
    suppressed rows | 0
    """
    from anonlab.diagnosis import SearchAnswer, SubsetAnswer, TableAnswer

    data = result.to_dict()
    q = data.get("question", "")
    if isinstance(result, SubsetAnswer):
        rows = [["S", ", ".join(result.quasi_identifiers)]]
        if result.levels:
            rows.append(["levels", ", ".join(f"{a}={v}" for a, v in result.levels.items())])
        rows.append(["rows", f"{result.n_rows:,}"])
        if result.required_k is not None:
            rows.append(["required k", str(result.required_k)])
            rows.append(["answer", "yes" if result.answer else "no"])
        rows.append(["k", str(result.k)])
        if q == "Q9":
            rows.append(["smallest delta", _delta(result.delta)])
            rows.append(["k after suppression", str(result.achieved_k)])
        else:
            rows.append(["delta", _delta(result.delta)])
        rows.append(["suppressed rows", f"{result.suppressed_rows:,}"])
        if result.suppressed_row_positions is not None:
            rows.append(["suppressed row positions", _positions(result.suppressed_row_positions)])
        return [
            Section(title or f"{q}: k-anonymity of S", rows=rows, notes=_why_no_suppression(result))
        ]
    if isinstance(result, SearchAnswer):
        head = f"{q}: largest subsets that are {result.k}-anonymous"
        if result.delta:
            head += f" after {result.delta:g}-suppression"
        return [
            Section(
                title or head,
                header=["size", "attributes"],
                rows=[[str(len(s)), ", ".join(s)] for s in result.subsets],
                notes=[
                    f"{len(result.subsets)} subsets, {result.evaluations} evaluations",
                    *_constant(result.constant_columns),
                ],
                numeric=[True, False],
            )
        ]
    if isinstance(result, TableAnswer):
        return [_table_section(result, title, limit)]
    if q == "risk":
        rows = [
            ["S", ", ".join(data["quasi_identifiers"])],
            ["rows / classes", f"{data['n_rows']:,} / {data['n_classes']:,}"],
            ["k (smallest class)", str(data["k"])],
            ["highest risk", f"{data['highest_risk']:.4f}"],
            ["average risk", f"{data['average_risk']:.4f}"],
            ["unique records", f"{data['unique_records']:,} ({data['unique_fraction']:.2%})"],
            [
                f"records in classes < {data['threshold']}",
                f"{data['records_at_risk']:,} ({data['at_risk_fraction']:.2%})",
            ],
        ]
        hist = [
            [b["class_size"], f"{b['classes']:,}", f"{b['records']:,}"]
            for b in data["class_size_histogram"]
        ]
        return [
            Section(title or "Re-identification risk (prosecutor model)", rows=rows),
            *(sample_risk_sections(data) if "prosecutor" in data else []),
            Section(
                "Class sizes",
                header=["class size", "classes", "records"],
                rows=hist,
                numeric=[False, True, True],
            ),
        ]
    if q == "quasi-identifiers":
        rows = [
            [
                ", ".join(s["attributes"]),
                str(s["k"]),
                f"{s['records_exposed']:,}",
                _positions(s["exposed_row_positions"], 10),
            ]
            for s in data["subsets"][: 40 if limit is not None else None]
        ]
        return [
            Section(
                title
                or f"Minimal attribute sets that put records in classes < {data['threshold']}",
                header=["attributes", "k", "records exposed", "exposed rows (0-based)"],
                rows=rows,
                notes=[
                    f"{len(data['subsets'])} minimal sets, {data['evaluations']} evaluations",
                    *_constant(data.get("constant_columns", [])),
                ],
                numeric=[False, True, True, False],
            )
        ]
    raise TypeError(f"Cannot render a {type(result).__name__}.")


def _share(value: float | None) -> str:
    return "no solution" if value is None else f"{value:.4%}"


def sample_risk_sections(data: dict[str, Any]) -> list[Section]:
    """The attacker models and population estimates of a risk answer (its JSON form:
    ``RiskSummary.to_dict()``), each with its meaning.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import risk
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
    >>> [s.title for s in sample_risk_sections(risk(t, ["zip"], sampling_fraction=0.5).to_dict())]
    ['Attacker models', 'Population uniqueness (sampling fraction 0.5, population 6)']
    """
    t = data["threshold"]
    rows = []
    for name, meaning in (
        ("prosecutor", "knows the person is in this table"),
        ("journalist", "knows only that the person is in the population"),
    ):
        m = data[name]
        rows.append(
            [
                name,
                f"{m['records_at_risk']:.2%}",
                f"{m['highest']:.4f}",
                f"{m['average']:.4f}",
                meaning,
            ]
        )
    rows.append(
        ["marketer", "", "", f"{data['marketer']['average']:.4f}", "re-identifies all he can"]
    )
    pop = "the population table" if "population_table" in data else "this table"
    out = [
        Section(
            "Attacker models",
            header=["attacker", "records at risk", "highest", "average", "who"],
            rows=rows,
            numeric=[False, True, True, True, False],
            notes=[
                f"records at risk: share of the records in classes of fewer than {t} "
                f"records (a chance above 1/{t} of being re-identified; the journalist's "
                f"classes counted in {pop}); highest: the largest chance of one record; "
                "average: the share of the records the attacker re-identifies on average.",
                f"sample uniqueness: {data['sample_uniqueness']:.2%} of the records are alone "
                "in their class in this table.",
            ],
        )
    ]
    if "population_uniqueness" in data:
        p = data["population_uniqueness"]
        rows = [
            ["Pitman", _share(p["pitman"])],
            ["Zayatz", _share(p["zayatz"])],
            ["SNB", _share(p["snb"])],
            [f"Dankar's rule (picks {p['dankar_choice'] or 'none'})", _share(p["dankar"])],
        ]
        out.append(
            Section(
                f"Population uniqueness (sampling fraction {data['sampling_fraction']:.6g}, "
                f"population {data['population_size']:,})",
                header=["estimator", "records unique in the population"],
                rows=rows,
                numeric=[False, True],
                notes=[
                    "Each value: the estimated share of the records that are alone in their "
                    "class in the whole population (unique in the sample is not unique in "
                    "the population); 'no solution' where the estimator's equations have none."
                ],
            )
        )
    if "weighted_risk" in data:
        w = data["weighted_risk"]
        out.append(
            Section(
                f"Risk from the sampling weights in {data['weight']!r} (Benedetti-Franconi)",
                rows=[
                    [
                        "expected re-identifications",
                        f"{w['expected_reidentifications']:,.2f} "
                        f"({w['global_risk']:.2%} of the records)",
                    ],
                    ["highest individual risk", f"{w['highest']:.4f}"],
                    [
                        f"records with a risk above {w['threshold']:g}",
                        f"{w['records_above_threshold']:,}",
                    ],
                    ["population (sum of the weights)", f"{w['population_size']:,.0f}"],
                ],
                notes=[
                    "A record's individual risk is its chance of being re-identified, from "
                    "how many records share its key in the sample and how many its weights say "
                    "the population holds."
                ],
            )
        )
    return out


def _risk_rows(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(measure, value, meaning) of a risk answer's JSON form, the population estimates and
    the weighted risk where the answer has them."""
    t = data["threshold"]
    rows = [
        (
            "k (smallest class)",
            f"{data['k']:,}",
            "every record shares its values with k - 1 others",
        ),
        (
            "prosecutor: highest risk",
            f"{data['highest_risk']:.4f}",
            "the largest chance of re-identifying one record (1/k)",
        ),
        (
            "prosecutor: average risk",
            f"{data['average_risk']:.4f}",
            "the share of the records re-identified on average",
        ),
        (
            f"records in classes < {t}",
            f"{data['at_risk_fraction']:.2%}",
            f"records with a chance above 1/{t} of being re-identified",
        ),
        ("sample uniques", f"{data['unique_fraction']:.2%}", "records alone in their class"),
    ]
    if "journalist" in data:
        j = data["journalist"]
        rows.append(
            (
                "journalist: highest risk",
                f"{j['highest']:.4f}",
                "the attacker knows only that the person is in the population",
            )
        )
        rows.append(
            (
                "marketer: average risk",
                f"{data['marketer']['average']:.4f}",
                "the share an attacker re-identifies matching everyone at once",
            )
        )
    if "population_uniqueness" in data:
        p = data["population_uniqueness"]
        chosen = f" ({p['dankar_choice']})" if p["dankar_choice"] else ""
        rows.append(
            (
                "population uniques",
                _share(p["dankar"]) + chosen,
                "records estimated alone in their class in the whole population (the "
                "estimator Dankar's rule picks)",
            )
        )
    if "weighted_risk" in data:
        w = data["weighted_risk"]
        rows.append(
            (
                "expected re-identifications",
                f"{w['expected_reidentifications']:,.1f} ({w['global_risk']:.2%})",
                f"from the sampling weights in {data['weight']!r} (Benedetti-Franconi)",
            )
        )
    return rows


def risk_comparison_section(before: dict[str, Any], after: dict[str, Any]) -> Section:
    """The risk measures of a table before and after anonymization, side by side, each with
    its meaning (the JSON forms of two :class:`~anonlab.diagnosis.RiskSummary`).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import risk
    >>> before = risk(EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]}), ["zip"])
    >>> after = risk(EncodedTable.from_columns({"zip": ["435*"] * 3}), ["zip"])
    >>> section = risk_comparison_section(before.to_dict(), after.to_dict())
    >>> section.rows[1][:3]
    ['prosecutor: highest risk', '1.0000', '0.3333']
    """
    b, a = _risk_rows(before), {m: v for m, v, _ in _risk_rows(after)}
    return Section(
        "Re-identification risk before and after",
        header=["measure", "before", "after", "meaning"],
        rows=[[m, v, a.get(m, "-"), meaning] for m, v, meaning in b],
        numeric=[False, True, True, False],
    )


def suda_section(data: dict[str, Any], values: Sequence[Sequence[str]] = ()) -> Section:
    """The riskiest records by SUDA score (the JSON form of a
    :class:`~anonlab.diagnosis.suda.SudaResult`), with their values when given (one list per
    record of ``data["riskiest"]``, in the order of ``data["quasi_identifiers"]``).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.diagnosis.suda import suda2
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "M", "F"]})
    >>> suda_section(suda2(t, ["zip", "sex"]).to_dict()).rows[0][:2]
    ['1', '1']
    """
    qis = list(data["quasi_identifiers"])
    rows = []
    for i, r in enumerate(data["riskiest"]):
        shown = list(values[i]) if i < len(values) else []
        rows.append(
            [
                f"{r['row'] + 1:,}",
                f"{r['score']:g}",
                f"{r['dis_score']:.4f}",
                "; ".join(", ".join(m) for m in r["msus"]),
                *shown,
            ]
        )
    header = ["row", "SUDA score", "DIS score", "minimal sample uniques"]
    if values:
        header += qis
    return Section(
        f"Riskiest records by SUDA score (minimal sample uniques up to {data['max_size']} "
        "attributes)",
        header=header,
        rows=rows,
        numeric=[True, True, True, False, *([False] * (len(header) - 4))],
        notes=[
            f"{data['records_with_msus']:,} records have a minimal sample unique: a set of "
            "their values no other record holds, none of whose subsets is unique. The SUDA "
            "score grows with the number of such sets and with how small they are; the DIS "
            "score is the record's estimated chance of being re-identified (Elliot et al.), "
            "rows counted from 1.",
        ],
    )


def _positions(positions: Sequence[int], shown: int = 20) -> str:
    """Row positions, the first ``shown`` of them and how many more."""
    more = len(positions) - shown
    return ", ".join(map(str, positions[:shown])) + (f" ... (+{more:,})" if more > 0 else "")


def _why_no_suppression(result: SubsetAnswer) -> list[str]:
    """Q5, Q6: why delta-suppression removed no row, when it removed none."""
    budget, smallest = result.suppression_budget, result.smallest_class_rows
    if budget is None or smallest is None or result.suppressed_rows:
        return []
    n = result.n_rows
    if budget == 0:
        return [
            f"Nothing was suppressed: delta x rows = {result.delta:g} x {n:,} = "
            f"{result.delta * n:.3g}, less than one row."
        ]
    if smallest == n:
        return [
            f"Nothing was suppressed: every class has {result.k:,} rows. Suppression removes "
            "whole classes, the smallest first (Lemma 2), and removing some classes of size k "
            "leaves k as it is."
        ]
    return [
        f"Nothing was suppressed: the classes of size {result.k} hold {smallest:,} rows, more "
        f"than the {budget:,} that delta allows. Suppression removes whole classes, the "
        "smallest first (Lemma 2), and k rises only when every class of size k goes."
    ]


def _constant(columns: Sequence[str]) -> list[str]:
    """A note naming the candidate columns that hold one value in every row."""
    if not columns:
        return []
    names = ", ".join(map(repr, columns))
    return [
        f"{names} {'holds' if len(columns) == 1 else 'hold'} one value in every row: "
        f"{'it tells' if len(columns) == 1 else 'they tell'} no one apart and can be left out "
        "of the quasi-identifiers."
    ]


#: Table answers: the columns shown (Q4 has no suppression; in Q8 delta is in the title).
_TABLE_COLUMNS = {
    "Q4": ("attributes", "k"),
    "Q8": ("attributes", "k", "suppressed rows"),
}


def _table_section(result: TableAnswer, title: str | None, limit: int | None) -> Section:
    """A table answer (Q4, Q8, Q10-Q12): a row per subset (and k); when some subsets'
    classes were not computed, a column says which."""
    limit = len(result.rows) if limit is None else limit
    header = list(
        _TABLE_COLUMNS.get(result.question, ("attributes", "k", "delta", "suppressed rows"))
    )
    skipped = sum(1 for r in result.rows if not r.evaluated)
    if skipped:
        header.append("evaluated")
    rows = []
    for r in result.rows[:limit]:
        cells = {
            "attributes": ", ".join(r.attributes),
            "k": str(r.k),
            "delta": _delta(r.delta),
            "suppressed rows": f"{r.suppressed_rows:,}",
            "evaluated": "yes" if r.evaluated else "no *",
        }
        rows.append([cells[h] for h in header])
    notes = []
    if len(result.rows) > limit:
        notes.append(f"... {len(result.rows) - limit} more rows (use --json for all)")
    if skipped:
        notes.append(
            f"* not evaluated ({skipped:,} row{'s' if skipped > 1 else ''}): the subset "
            "contains one that already "
            + (
                "has k = 1, so its k is 1"
                if result.question in ("Q4", "Q8")
                else "needs every row suppressed"
                if result.question == "Q10"
                else "makes every record unique"
            )
            + " (Lemma 1)."
        )
    notes.append(f"{len(result.rows)} rows, {result.evaluations} evaluations")
    notes.extend(_constant(result.constant_columns))
    return Section(
        title or _table_title(result),
        header=header,
        rows=rows,
        notes=notes,
        numeric=[h not in ("attributes", "evaluated") for h in header],
    )


def _table_title(result: TableAnswer) -> str:
    return {
        "Q4": "Q4: k for every subset",
        "Q8": f"Q8: k for every subset after {result.delta or 0:g}-suppression",
        "Q10": f"Q10: smallest delta for k = {result.k}, every subset",
        "Q11": "Q11: smallest delta for each k",
        "Q12": "Q12: smallest delta for every subset and k",
    }.get(result.question, result.question)


# ------------------------------------------------------------------ anonymization
def anonymization_sections(result: Any) -> list[Section]:
    """Sections of an :class:`~anonlab.release.result.AnonymizationResult`: the recoding,
    the loss measured on the release, the verification and the algorithm's statistics.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> [s.title for s in anonymization_sections(anonlab.anonymize(t, job))]
    ['Anonymized with optimal']
    """
    rows: list[list[str]] = []
    summary = result.summary
    hierarchies = result.problem.hierarchies
    if "levels" in summary:
        rows.append(["levels", ", ".join(f"{a}={v}" for a, v in summary["levels"].items())])
        for attr, level in summary["levels"].items():
            rows.append([f"  {attr} at level {level}", _labels(hierarchies[attr], level)])
    if "level_vectors" in summary:
        rows.append(["level vectors", f"{summary['level_vectors']:,}"])
        for attr, per in summary.get("rows_per_level", {}).items():
            rows.append([f"  rows per level of {attr}", _fmt(per)])
            for level in per:
                rows.append([f"    {attr} at level {level}", _labels(hierarchies[attr], level)])
    if "generalized_cells" in summary:  # a cell cover
        cells = summary["generalized_cells"]
        rows.append(["generalized cells", ", ".join(f"{a}={v:,}" for a, v in cells.items())])
    rows.append(["loss (on the release)", f"{result.metric} = {result.loss:.6g}"])
    ver = result.release.verification
    rows.append(["suppressed rows", f"{ver.suppressed_rows:,}"])
    if ver.removed_rows:
        rows.append(["rows removed by the algorithm", f"{ver.removed_rows:,}"])
    cover = not result.forms_classes
    rows.append(["distinct released rows" if cover else "released classes", f"{ver.classes:,}"])
    if ver.k_after is not None:
        rows.append(["k after", f"{ver.k_after:,} ({ver.k_meaning})"])
    rows.append(
        ["checks", ", ".join(f"{m}: {'ok' if v else 'FAILED'}" for m, v in ver.checks.items())]
    )
    for label, value in result.search.rows():
        rows.append([label, _fmt(value)])
    if result.output is not None:
        rows.append(["written", str(result.output)])
    params = ", ".join(f"{k}={_fmt(v)}" for k, v in result.parameters.items() if v is not None)
    title = f"Anonymized with {result.algorithm}" + (f" ({params})" if params else "")
    return [Section(title, rows=rows)]


def _loss_meaning(metric: str, loss: float) -> str:
    """What a release's ``gcp`` or ``ncp`` means, read from its labels ("" for the other
    metrics).

    Examples
    --------
    >>> _loss_meaning("gcp", 0.0317)
    ': a released quasi-identifier cell hides on average 3.2 % of its attribute (0: every cell as in the data, 1: every cell hidden)'
    """
    if metric == "gcp":
        return (
            f": a released quasi-identifier cell hides on average {loss:.1%} of its attribute"
            " (0: every cell as in the data, 1: every cell hidden)"
        ).replace("%", " %")
    if metric == "ncp":
        return (
            ": the released quasi-identifier cells hide that many attributes' worth in all "
            "(each cell the share of its attribute's range or values it covers)"
        )
    return ""


def _labels(hierarchy: Any, level: int, shown: int = 3) -> str:
    """A few labels of a hierarchy level, to say what the level number means."""
    labels = hierarchy.level_labels(level)
    text = ", ".join(map(str, labels[:shown]))
    return text + (f", ... ({labels.size:,} labels)" if labels.size > shown else "")


def check_sections(report: Any) -> list[Section]:
    """Sections of a :class:`~anonlab.jobs.check.CheckReport`: the models of a table as it
    is; with a release, first what was verified of it, and its k.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"sex": ["F", "M"] * 5})
    >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]}
    >>> [s.title for s in check_sections(anonlab.check(t, job))]
    ['10 rows in 2 classes']
    """
    release = getattr(report, "release", None)
    graph = release is not None and release.get("kind") == "anonymity graph"
    sections = []
    if release is not None:
        sections.append(
            Section(
                "The release, verified against the data and the job",
                rows=[
                    [f["check"], ("ok: " if f["ok"] else "FAILED: ") + f["detail"]]
                    for f in release["verified"]
                ],
            )
        )
    rows = []
    notes = []
    for m in report.models:
        rows.append(
            [
                m["model"] + " " + ", ".join(f"{k}={v}" for k, v in m["params"].items()),
                "yes" if m["holds"] else "no",
                "-" if graph else f"{m['violating_classes']:,}",
                f"{m['violating_rows']:,}",
            ]
        )
        if "violating_records" in m:  # a per-record model: who is over their own limit
            bad = m["violating_records"]
            shown = ", ".join(str(r + 1) for r in bad[:20]) + (", ..." if len(bad) > 20 else "")
            measures = [k[len("highest_") :] for k in m if k.startswith("highest_")]
            figures = "; ".join(
                f"highest {x} {m['highest_' + x]:.4g}, average {m['average_' + x]:.4g}"
                for x in measures
            )
            notes.append(
                f"{m['model']}: {len(bad):,} records over their limit"
                + (f" (rows {shown}, counted from 1)" if bad else "")
                + (f"; {figures}" if figures else "")
            )
    for m in report.models:
        if not m["holds"]:  # a "no" always says what violates
            notes.append(f"{m['model']} does not hold: {m['violation']}.")
    if graph:
        assert release is not None
        notes.append(
            f"largest k = {release['largest_k']} (Definition 1, max-flow); Condition 1 allows "
            f"{release['condition_1_k']}; {release['edges']:,} edges between "
            f"{release['distinct_original']:,} original and {release['distinct_released']:,} "
            f"released tuples, {release['build_s'] + release['flow_s']:.2f} s"
        )
    if release is not None:
        notes.append(f"k after = {release['k_after']} ({release['k_meaning']})")
    if report.loss is not None:
        notes.append(
            f"{report.metric} = {report.loss:.6g}{_loss_meaning(report.metric, report.loss)}"
        )
    for d in getattr(report, "disclosure", []):
        notes.append(f"attribute disclosure: {d.sentence()}")
    if release is not None:
        failed = len(release["failures"])
        notes.append(
            "the release holds: yes"
            if release["holds"]
            else f"the release holds: NO ({failed} failure{'s' if failed != 1 else ''} above)"
        )
    sections.append(
        Section(
            f"{report.n_rows:,} rows in {report.n_classes:,} "
            + ("distinct released rows" if graph else "classes"),
            header=[
                "model",
                "holds",
                "violating classes",
                "violating records" if graph else "violating rows",
            ],
            rows=rows,
            notes=notes,
            numeric=[False, False, True, True],
        )
    )
    sections += [disclosure_section(d) for d in getattr(report, "disclosure", []) if d.exposed]
    return sections


def disclosure_section(disclosure: Any) -> Section:
    """The classes that give away a sensitive value (an
    :class:`~anonlab.diagnosis.disclosure.AttributeDisclosure`), most exposed first.

    Examples
    --------
    >>> from anonlab.diagnosis.disclosure import AttributeDisclosure
    >>> d = AttributeDisclosure("income", 2, 10, 1, 5, worst=[
    ...     {"labels": ["4350"], "size": 5, "value": "<=50K", "share": 1.0}])
    >>> disclosure_section(d).rows
    [['4350', '5', '<=50K', '100%']]
    """
    return Section(
        f"Attribute disclosure of {disclosure.attribute!r}",
        header=["class", "records", "value", "share of the class"],
        rows=[
            [
                ", ".join(str(v) for v in w["labels"]),
                f"{w['size']:,}",
                str(w["value"]),
                f"{w['share']:.0%}",
            ]
            for w in disclosure.worst
        ],
        numeric=[False, True, False, True],
        notes=[
            disclosure.sentence(),
            "k-anonymity hides who a record is, not what it says; l-diversity or "
            "t-closeness of this attribute in the job prevents it.",
        ],
    )


def print_plain(sections: Sequence[Section]) -> str:
    """The sections as plain text (for logs and tests).

    Examples
    --------
    >>> print(print_plain([Section("Result", rows=[["k", "2"], ["rows", "30"]])]), end="")
    Result
    k | 2
    rows | 30
    """
    lines: list[str] = []
    for s in sections:
        lines.append(s.title)
        if s.header:
            lines.append(" | ".join(s.header))
        lines.extend(" | ".join(r) for r in s.rows)
        lines.extend(s.notes)
        lines.append("")
    return "\n".join(lines)
