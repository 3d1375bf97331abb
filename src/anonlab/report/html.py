"""The HTML report and the pieces the web app shares with it: one self-contained page.

Everything a page needs is inside it: the style sheet, the figures as inline SVG (with a
tooltip on every bar and point), no script and no address outside the page; a
Content-Security-Policy forbids the browser to fetch anything. Every figure has its numbers
beside it (a table) and the command that reproduces it.

This module renders results; it never computes them. :func:`render` lays out a
:class:`~anonlab.report.document.ReportData` that :func:`anonlab.api.report_data` filled with
answers of the API; :func:`answer_html` lays out one answer (the web app's pages).
"""

from __future__ import annotations

import datetime
import html
import shlex
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from anonlab.diagnosis import (
    QuasiIdentifierReport,
    RiskSummary,
    SearchAnswer,
    SensitiveDistribution,
    TableAnswer,
    TableProfile,
)
from anonlab.report import (
    Section,
    _delta,
    _fmt,
    anonymization_sections,
    check_sections,
    diagnosis_sections,
    disclosure_section,
    risk_comparison_section,
    suda_section,
)
from anonlab.report import _plots as plots
from anonlab.report.document import ExploreData, JobFigures, ReportData

__all__ = [
    "CSS",
    "answer_html",
    "cli_command",
    "job_html",
    "page",
    "profile_html",
    "render",
    "render_explore",
    "sections_html",
]

#: The style sheet of the report and of the web app.
CSS = """
:root { --ink: #1d2733; --muted: #5b6673; --line: #d9dee5; --accent: #3b6ea8; --bad: #b3261e;
        --good: #2e7d32; --bg: #f6f8fa; }
* { box-sizing: border-box; }
/* no scroll anchoring: a click must land where it was aimed, even after a resize */
html { overflow-anchor: none; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0; background: #fff; }
header.top { background: var(--ink); color: #fff; padding: 14px 28px; }
header.top a { color: #fff; }
header.top h1 { margin: 0; font-size: 22px; }
header.top .meta { color: #c8d1db; font-size: 13px; }
main { max-width: 1180px; margin: 0 auto; padding: 10px 28px 40px; }
h2 { border-bottom: 2px solid var(--line); padding-bottom: 4px; margin-top: 34px; }
h3 { margin: 22px 0 8px; }
nav.toc a { margin-right: 14px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 9px; text-align: left;
         vertical-align: top; }
th { background: var(--bg); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { background: none; font-weight: 600; }
.numbers { max-height: 360px; overflow: auto; }
figure.fig { display: grid; grid-template-columns: minmax(0, 3fr) minmax(240px, 2fr); gap: 18px;
             margin: 8px 0 26px; align-items: start; }
figure.fig .plot svg { width: 100%; height: auto; }
figure.fig figcaption { grid-column: 1 / -1; color: var(--muted); font-size: 13px; }
@media (max-width: 900px) { figure.fig { grid-template-columns: 1fr; } }
@media print {
  /* printed or saved as PDF: every row of every table, figures above their numbers */
  .numbers, pre { max-height: none; overflow: visible; }
  figure.fig { display: block; break-inside: avoid-page; }
  header.top { background: none; color: var(--ink); }
  header.top .meta { color: var(--muted); }
  nav.toc, form.panel, button { display: none; }
  tr, .card { break-inside: avoid; }
  main { max-width: none; padding: 0; }
}
pre { background: var(--bg); border: 1px solid var(--line); padding: 8px 10px; overflow: auto;
      font-size: 12.5px; }
pre.cmd::before { content: "$ "; color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0 16px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 140px; }
.card .value { display: block; font-size: 22px; font-weight: 650; }
.card .label { color: var(--muted); font-size: 12.5px; }
.yes { color: var(--good); font-weight: 600; }
.no { color: var(--bad); font-weight: 600; }
.error { border-left: 4px solid var(--bad); background: #fdecea; padding: 8px 12px; margin: 10px 0; }
.warning { border-left: 4px solid #c77700; background: #fff4e0; padding: 8px 12px; margin: 10px 0; }
.note { color: var(--muted); font-size: 13px; }
p.lead { font-size: 17px; border-left: 4px solid var(--accent); padding: 6px 12px; background: var(--bg); }
form.panel { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 12px 0; }
form.panel fieldset { border: none; padding: 0; margin: 0 0 10px; }
form.panel legend { font-weight: 600; padding: 0; margin-bottom: 4px; }
form.panel label { margin-right: 14px; white-space: nowrap; display: inline-block; }
input[type=number] { width: 6em; }
button { background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: 6px 14px;
         font-size: 14px; cursor: pointer; margin: 4px 6px 4px 0; }
textarea { width: 100%; font: 12.5px monospace; }
progress { width: 420px; height: 18px; }
"""

# A report fetches nothing: inline style sheet and images only, no script.
_REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def escape(value: Any) -> str:
    """``value`` as HTML text."""
    return html.escape(str(value), quote=True)


def page(title: str, body: str, *, head: str = "", csp: str | None = _REPORT_CSP) -> str:
    """A whole HTML document with the style sheet inline.

    Parameters
    ----------
    title : str
        The document's title (escaped here).
    body : str
        HTML of the body.
    head : str
        Extra HTML for the head (e.g. a refresh).
    csp : str or None
        A Content-Security-Policy as a meta element (None: none).

    Returns
    -------
    str
    """
    policy = f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">' if csp else ""
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">{policy}'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style>{head}</head>\n"
        f"<body>{body}</body></html>\n"
    )


def _cell(text: str, numeric: bool, header: bool = False) -> str:
    tag = "th" if header else "td"
    cls = ' class="num"' if numeric else ""
    return f"<{tag}{cls}>{escape(text)}</{tag}>"


def sections_html(sections: Iterable[Section]) -> str:
    """Report sections (the command line's tables) as HTML tables, with the same text.

    Returns
    -------
    str
    """
    out = []
    for sec in sections:
        out.append(f"<h3>{escape(sec.title)}</h3>")
        if sec.header is None:
            rows = "".join(
                f"<tr><th>{escape(r[0])}</th><td>{escape(r[1] if len(r) > 1 else '')}</td></tr>"
                for r in sec.rows
            )
            out.append(f'<table class="kv" data-section="{escape(sec.title)}">{rows}</table>')
        else:
            numeric = [i < len(sec.numeric) and sec.numeric[i] for i in range(len(sec.header))]
            head = "".join(_cell(h, numeric[i], True) for i, h in enumerate(sec.header))
            body = "".join(
                "<tr>" + "".join(_cell(v, numeric[i]) for i, v in enumerate(r)) + "</tr>"
                for r in sec.rows
            )
            out.append(
                f'<div class="numbers"><table class="grid" data-section="{escape(sec.title)}">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
            )
        out.extend(f'<p class="note">{escape(n)}</p>' for n in sec.notes)
    return "\n".join(out)


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool]) -> str:
    head = "".join(_cell(h, numeric[i], True) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(_cell(_text(v), numeric[i]) for i, v in enumerate(r)) + "</tr>"
        for r in rows
    )
    return (
        f'<div class="numbers"><table class="grid"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _fmt(value)


def _figure(
    name: str, title: str, svg: str, numbers: str, caption: str = "", commands: Sequence[str] = ()
) -> str:
    cmds = "".join(f'<pre class="cmd">{escape(c)}</pre>' for c in commands)
    return (
        f'<h3 id="{escape(name)}">{escape(title)}</h3>'
        f'<figure class="fig" data-figure="{escape(name)}"><div class="plot">{svg}</div>'
        f"<div>{numbers}</div>"
        f"<figcaption>{escape(caption)}{cmds}</figcaption></figure>"
    )


def _cards(items: Sequence[tuple[str, str, Any]]) -> str:
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card" data-card="{escape(key)}" data-value="{escape(raw)}">'
            f'<span class="value">{escape(_text(raw))}</span>'
            f'<span class="label">{escape(label)}</span></div>'
            for key, label, raw in items
        )
        + "</div>"
    )


def cli_command(data: str | None, command: str, *args: str, options: Sequence[str] = ()) -> str:
    """An ``anonlab`` command line, quoted for a POSIX shell.

    Parameters
    ----------
    data : str or None
        The data file (``DATA`` when the table came from Python).
    command : str
        ``diagnose``, ``anonymize``, ...
    *args : str
        The options of the command.
    options : sequence of str
        Options that shape the data (``--drop-missing``); ``diagnose`` takes them.
    """
    extra = list(options) if command in ("diagnose", "report") else []
    parts = ["anonlab", command, data or "DATA", *args, *extra]
    return " ".join(p if p == "DATA" else shlex.quote(p) for p in parts)


# ----------------------------------------------------------------------- diagnosis figures
def profile_html(
    profile: TableProfile, *, identifying: Collection[str] = (), min_rows: int = 1
) -> str:
    """The table's profile: rows, columns, roles, missing and distinct values.

    Parameters
    ----------
    profile : TableProfile
    identifying : collection of str
        Columns whose values are never shown (identifiers, columns that identify a row on
        their own): their most frequent value is masked.
    min_rows : int
        A most frequent value held by fewer rows than this is masked too (it is the value
        of a few people).

    Returns
    -------
    str

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import profile
    >>> p = profile(EncodedTable.from_rows([("a1", "F"), ("a2", "F")], ["patient_id", "sex"]))
    >>> page = profile_html(p, identifying=["patient_id"])
    >>> "a1" in page, "hidden: identifying column" in page, "F (2)" in page
    (False, True, True)
    """
    hidden = set(identifying)

    def top(c: Any) -> str:
        if c.top_value is None:
            return ""
        if c.name in hidden:
            return "hidden: identifying column"
        if c.top_count < min_rows:
            return f"hidden: held by fewer than {min_rows} rows"
        return f"{c.top_value} ({c.top_count:,})"

    cards = _cards(
        [
            ("rows", "rows", profile.n_rows),
            ("columns", "columns", profile.n_columns),
            ("missing", "missing values", sum(c.missing for c in profile.columns)),
        ]
    )
    rows = [[c.name, c.role, c.distinct, c.missing, top(c)] for c in profile.columns]
    rows += [[n, "nested (carried through)", "", "", ""] for n in profile.nested]
    table = _table(
        ["column", "role", "distinct values", "missing", "most frequent (rows)"],
        rows,
        [False, False, True, True, False],
    )
    return cards + f'<div data-figure="profile">{table}</div>'


def _histogram(risk: RiskSummary, commands: Sequence[str]) -> str:
    hist = risk.class_size_histogram
    labels = [b["class_size"] for b in hist]
    svg = plots.bar_chart(
        labels,
        [b["records"] for b in hist],
        tips=[
            f"class size {b['class_size']}: {b['classes']:,} classes, {b['records']:,} records"
            for b in hist
        ],
        xlabel="class size",
        ylabel="records",
        annotations=[f"{b['classes']:,} cl." for b in hist],
    )
    numbers = _table(
        ["class size", "classes", "records"],
        [[b["class_size"], b["classes"], b["records"]] for b in hist],
        [False, True, True],
    )
    return _figure(
        "class-sizes",
        f"Class sizes under S (k = {risk.k})",
        svg,
        numbers,
        f"{risk.n_classes:,} classes over {risk.n_rows:,} rows; a record in a class of size f "
        "is re-identified with probability 1/f (prosecutor model).",
        commands,
    )


def _k_delta(q11: TableAnswer, commands: Sequence[str]) -> str:
    rows = q11.rows
    svg = plots.k_delta_curve(
        [r.delta for r in rows],
        [r.k for r in rows],
        tips=[f"k = {r.k}: δ = {_delta(r.delta)} ({r.suppressed_rows:,} rows)" for r in rows],
    )
    numbers = _table(
        ["k", "delta", "suppressed rows"],
        [[r.k, _delta(r.delta), r.suppressed_rows] for r in rows],
        [True, True, True],
    )
    return _figure(
        "k-delta",
        "k against the suppression threshold δ (Q11)",
        svg,
        numbers,
        "The smallest δ that makes the table k-anonymous for each k, suppressing the smallest "
        "classes first (the paper's Figures 7 and 15).",
        commands,
    )


def _lattice(q4: TableAnswer, q3: SearchAnswer | None, commands: Sequence[str]) -> str:
    best = {tuple(s) for s in q3.subsets} if q3 is not None else set()
    rows = q4.rows
    n_attr = max((len(r.attributes) for r in rows), default=1)
    svg = plots.lattice(
        [len(r.attributes) for r in rows],
        [r.k for r in rows],
        [tuple(r.attributes) in best for r in rows],
        tips=[
            f"{', '.join(r.attributes)}: k = {r.k}"
            + ("" if r.evaluated else " (contains a subset with k = 1)")
            for r in rows
        ],
        n_attributes=n_attr,
    )
    numbers = _table(
        ["attributes", "k", "Q3"],
        [
            [", ".join(r.attributes), str(r.k), "largest" if tuple(r.attributes) in best else ""]
            for r in rows
        ],
        [False, True, False],
    )
    caption = (
        f"k of each of the {len(rows):,} subsets of S (Q4, {q4.evaluations} evaluated; a subset "
        "that contains one with k = 1 has k = 1)."
    )
    if q3 is not None:
        caption += (
            f" Ringed: the {len(q3.subsets)} largest {q3.k}-anonymous subsets (Q3, "
            f"{q3.evaluations} evaluations)."
        )
    return _figure(
        "lattice", "k of every attribute subset (Q4, Q3)", svg, numbers, caption, commands
    )


def _singling_out(report: QuasiIdentifierReport, commands: Sequence[str]) -> str:
    shown = report.subsets[:25]
    svg = plots.bar_chart(
        [", ".join(s["attributes"]) for s in shown],
        [s["records_exposed"] for s in shown],
        tips=[
            f"{', '.join(s['attributes'])}: {s['records_exposed']:,} records in classes smaller "
            f"than {report.threshold} (k = {s['k']})"
            for s in shown
        ],
        xlabel="records singled out",
        horizontal=True,
    )
    numbers = _table(
        ["attributes", "k", "records exposed"],
        [[", ".join(s["attributes"]), s["k"], s["records_exposed"]] for s in report.subsets],
        [False, True, True],
    )
    return _figure(
        "singling-out",
        "Minimal attribute sets that single people out",
        svg,
        numbers,
        f"{len(report.subsets)} minimal sets put records in classes smaller than "
        f"{report.threshold} ({report.evaluations} evaluations); anyone who knows one of them "
        "about a person can find that person's row.",
        commands,
    )


def answer_html(answer: Any, *, commands: Sequence[str] = ()) -> str:
    """One answer of the API as the web app shows it: its tables and, where its data has
    one, its figure.

    Parameters
    ----------
    answer : SubsetAnswer, SearchAnswer, TableAnswer, RiskSummary, QuasiIdentifierReport or
        TableProfile
    commands : sequence of str
        Commands that give the same answer.

    Returns
    -------
    str
    """
    if isinstance(answer, TableProfile):
        return profile_html(answer)
    parts = [f'<div class="answer" data-question="{escape(answer.to_dict().get("question"))}">']
    figure = ""
    if isinstance(answer, TableAnswer) and answer.question == "Q11":
        figure = _k_delta(answer, commands)
    elif isinstance(answer, TableAnswer) and answer.question in ("Q4", "Q8"):
        figure = _lattice(answer, None, commands)
    elif isinstance(answer, RiskSummary):
        figure = _histogram(answer, commands)
    elif isinstance(answer, QuasiIdentifierReport) and answer.subsets:
        figure = _singling_out(answer, commands)
    sections = diagnosis_sections(answer, limit=None)
    parts.append(sections_html(sections))
    parts.append(figure)
    if not figure:
        parts.extend(f'<pre class="cmd">{escape(c)}</pre>' for c in commands)
    parts.append("</div>")
    return "\n".join(parts)


# ----------------------------------------------------------------------- job figures
def _verdicts(job: JobFigures) -> str:
    after = job.result.checks
    rows = []
    for m in job.before.models:
        params = ", ".join(f"{k}={v}" for k, v in m["params"].items())
        rows.append(
            "<tr>"
            f"<td>{escape(m['model'])}</td><td>{escape(params)}</td>"
            f"{_verdict(m['holds'])}"
            f'<td class="num">{m["violating_classes"]:,}</td>'
            f'<td class="num">{m["violating_rows"]:,}</td>'
            f"{_verdict(after.get(m['model']))}</tr>"
        )
    return (
        '<div class="numbers"><table class="grid" data-figure="verdicts"><thead><tr>'
        "<th>model</th><th>parameters</th><th>holds before</th>"
        '<th class="num">violating classes</th><th class="num">violating rows</th>'
        "<th>holds after</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _disclosure(job: JobFigures) -> list[str]:
    """What the release gives away of each sensitive attribute, next to the verdicts."""
    holding = [m for m, ok in job.result.checks.items() if ok]
    out = []
    for d in job.after_disclosure:
        if not d.exposed:
            out.append(f'<p class="note" data-disclosure="none">{escape(d.sentence())}</p>')
            continue
        verdict = ", ".join(f"{m}: yes" for m in holding)
        out.append(
            f'<div class="warning" data-disclosure="{escape(d.attribute)}">'
            f"{escape(verdict)}, but attribute disclosure: {escape(d.sentence())}</div>"
        )
        out.append(sections_html([disclosure_section(d)]))
    return out


def _utility(utility: Any) -> list[str]:
    """What the release keeps: per attribute, its distributions, the associations, and the
    contingency table asked for."""
    per = _table(
        ["attribute", "generalized", "suppressed", "level", "keeps of its distribution"],
        [
            [
                a.attribute,
                f"{a.generalized:.1%}",
                f"{a.suppressed:.1%}",
                ""
                if a.level is None
                else f"{a.level} of {a.height}"
                + (" (fully generalized)" if a.fully_generalized else ""),
                f"{a.kept_distribution:.1%}",
            ]
            for a in utility.attributes
        ],  # fmt: skip
        [False, True, True, False, True],
    )
    out = [
        '<h3 id="utility">What the release keeps</h3>',
        f'<div data-figure="utility">{per}</div>',
        '<p class="note">generalized: the share of the records whose cell is a label above '
        "their value; suppressed: whose cell is not released (a suppressed row, or *); keeps "
        "of its distribution: one minus the total variation distance between the shares of "
        "its values in the data and of its cells in the release (a generalized attribute "
        "compares its labels on every record with those released: what suppression "
        "changed).</p>",
    ]
    for a in utility.attributes:
        labels = [v for v, _ in a.after]
        svg = plots.bar_chart(
            labels,
            [c for _, c in a.after],
            tips=[f"{a.attribute} = {v}: {c:,} released records" for v, c in a.after],
            xlabel="released records",
            horizontal=True,
        )
        numbers = _table(
            ["in the data", "records", "in the release", "records"],
            [
                [
                    *(a.before[i] if i < len(a.before) else ("", "")),
                    *(a.after[i] if i < len(a.after) else ("", "")),
                ]
                for i in range(max(len(a.before), len(a.after)))
            ],  # fmt: skip
            [False, True, False, True],
        )
        out.append(
            _figure(
                f"dist-{a.attribute}",
                f"{a.attribute} before and after",
                svg,
                numbers,
                a.sentence() + ".",
            )  # fmt: skip
        )
    moved = sorted(
        utility.associations,
        key=lambda r: -abs((r["before"] or 0) - (r["after"] or 0)),
    )[:15]
    out.append('<h3 id="associations">Associations between attributes (Cramér\'s V)</h3>')
    out.append(
        _table(
            ["attributes", "before", "after"],
            [[" & ".join(r["pair"]), _v(r["before"]), _v(r["after"])] for r in moved],
            [False, True, True],
        )
    )
    out.append(
        '<p class="note">Cramér\'s V: 0 when two attributes are unrelated, 1 when one '
        "determines the other; the pairs whose association changed most are listed. An "
        "analysis of a pair whose V dropped will find a weaker link in the release than in "
        "the data.</p>"
    )
    if utility.contingency is not None:
        c = utility.contingency
        for when in ("before", "after"):
            t = c[when]
            out.append(f"<h3>{escape(' x '.join(c['pair']))}: {when}</h3>")
            out.append(
                _table(
                    [f"{c['pair'][0]} \\ {c['pair'][1]}", *t["columns"]],
                    [[r, *row] for r, row in zip(t["rows"], t["counts"])],
                    [False, *([True] * len(t["columns"]))],
                )
            )
    return out


def _classification(u: Any) -> str:
    """Classifiers trained on the data and on the release, side by side."""
    rows = [
        [name, f"{a['data']:.1%}", f"{a['release']:.1%}",
         "-" if u.kept(name) is None else f"{u.kept(name):.0%}"]
        for name, a in u.accuracy.items()
    ]  # fmt: skip
    return (
        f'<h3 id="classification">Predicting {escape(u.target)} from the release</h3>'
        + '<div data-figure="classification">'
        + _table(
            [
                "classifier",
                "accuracy, trained on the data",
                "trained on the release",
                "keeps of the gain over guessing",
            ],
            rows,
            [False, True, True, True],
        )  # fmt: skip
        + "</div>"
        + f'<p class="note">{escape(u.sentence())} {u.test_records:,} of the {u.records:,} '
        f"released records held out; features: {escape(', '.join(u.features))}.</p>"
    )


def _v(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _verdict(holds: bool | None) -> str:
    if holds is None:
        return "<td></td>"
    return f'<td class="{"yes" if holds else "no"}">{"yes" if holds else "no"}</td>'


def _transformation(job: JobFigures) -> str:
    summary = job.result.summary
    rel = job.release
    qis = list(rel.heights)
    if "levels" in summary:
        levels = summary["levels"]
        svg = plots.bar_chart(
            qis,
            [levels[q] for q in qis],
            tips=[f"{q}: level {levels[q]} of {rel.heights[q]}" for q in qis],
            xlabel="hierarchy level (0 = the values as they are)",
            horizontal=True,
            annotations=[f"{levels[q]} / {rel.heights[q]}" for q in qis],
            limit=[rel.heights[q] for q in qis],
        )
        numbers = _table(
            ["attribute", "level", "height", "highest allowed"],
            [[q, levels[q], rel.heights[q], rel.max_levels[q]] for q in qis],
            [False, True, True, True],
        )
        caption = "One level per quasi-identifier (full-domain generalization)."
    elif "generalized_cells" in summary:  # a cell cover: each record covers k records
        wide = summary["generalized_cells"]
        rows = rel.released_rows + rel.suppressed_rows
        matrix = [[rows - wide.get(q, 0), wide.get(q, 0)] for q in qis]
        parts = ["as it is", "generalized"]
        svg = plots.stacked_bars(
            qis,
            parts,
            matrix,
            tips=[
                [f"{q}, {p}: {n:,} cells" for p, n in zip(parts, row)]
                for q, row in zip(qis, matrix)
            ],
            xlabel="cells",
        )
        numbers = _table(
            ["attribute", *parts],
            [[q, *row] for q, row in zip(qis, matrix)],
            [False, True, True],
        )
        caption = (
            f"Non-homogeneous generalization: each released record covers {summary.get('k', 0)} "
            "records (Murakami & Uno); the cells released as they are and generalized (covering "
            "more than their own value) per attribute."
        )
    else:
        per = summary.get("rows_per_level", {})
        top = max(rel.heights.values(), default=0)
        parts = [f"level {lv}" for lv in range(top + 1)]
        matrix = [[per.get(q, {}).get(lv, 0) for lv in range(top + 1)] for q in qis]
        svg = plots.stacked_bars(
            qis,
            parts,
            matrix,
            tips=[
                [f"{q}, level {lv}: {row[lv]:,} rows" for lv in range(top + 1)]
                for q, row in zip(qis, matrix)
            ],  # fmt: skip
            xlabel="rows",
        )
        numbers = _table(
            ["attribute", *parts],
            [[q, *row] for q, row in zip(qis, matrix)],
            [False, *([True] * len(parts))],
        )
        caption = (
            f"Cells of one column on different levels: {summary.get('level_vectors', 0):,} "
            "distinct level vectors; the rows on each level per attribute."
        )
    return _figure("transformation", "The released transformation", svg, numbers, caption)


def _attribute_loss(job: JobFigures) -> str:
    loss = job.release.attribute_loss
    result = job.result
    total = f"{result.metric} = {result.loss:.6g} on the whole release"
    if loss is None:
        return (
            f'<h3 id="loss">Information loss</h3><p data-figure="loss">{escape(total)}; the '
            "metric has no value per attribute for this release.</p>"
        )
    names = list(loss.values)
    svg = plots.bar_chart(
        names,
        [loss.values[a] for a in names],
        tips=[f"{a}: {loss.metric} {loss.values[a]:.6g}" for a in names],
        xlabel=f"{loss.metric} per attribute",
        horizontal=True,
        annotations=[f"{loss.values[a]:.4g}" for a in names],
    )
    numbers = _table(
        ["attribute", loss.metric],
        [[a, f"{loss.values[a]:.6g}"] for a in names] + [["total (" + result.metric + ")",
                                                          f"{result.loss:.6g}"]],
        [False, True],
    )  # fmt: skip
    return _figure(
        "loss",
        "Information loss per attribute and in total",
        svg,
        numbers,
        f"{total}; {loss.note}.",
    )


def _classes(job: JobFigures) -> str:
    before = job.before_risk.class_size_histogram
    after = job.release.class_size_histogram
    labels = [b["class_size"] for b in before]
    svg = plots.grouped_bars(
        labels,
        {"before": [b["records"] for b in before], "after": [b["records"] for b in after]},
        tips={
            "before": [
                f"before, size {b['class_size']}: {b['records']:,} records in "
                f"{b['classes']:,} classes"
                for b in before
            ],
            "after": [
                f"after, size {b['class_size']}: {b['records']:,} records in "
                f"{b['classes']:,} classes"
                for b in after
            ],
        },  # fmt: skip
        xlabel="class size (a record's risk of re-identification is 1 / size)",
        ylabel="records",
    )
    numbers = _table(
        ["class size", "classes before", "records before", "classes after", "records after"],
        [
            [b["class_size"], b["classes"], b["records"], a["classes"], a["records"]]
            for b, a in zip(before, after)
        ],
        [False, True, True, True, True],
    )
    rel = job.release
    caption = (
        f"Before: {job.before_risk.n_classes:,} classes, k = {job.before_risk.k}. After: "
        f"{rel.released_classes:,} released classes, k = {rel.k}; {rel.suppressed_rows:,} rows "
        f"in {rel.suppressed_classes:,} classes suppressed."
    )
    return _figure("classes", "Class sizes before and after", svg, numbers, caption)


def _sensitive(dist: SensitiveDistribution) -> str:
    rows = ["whole table"] + [f"class {c['class']} ({c['size']:,})" for c in dist.classes]
    matrix = [dist.table_counts] + [c["counts"] for c in dist.classes]
    tips = []
    for name, counts in zip(rows, matrix):
        total = sum(counts) or 1
        tips.append([f"{name}: {v} {n:,} ({n / total:.1%})" for v, n in zip(dist.values, counts)])
    svg = plots.stacked_bars(
        rows, dist.values, matrix, tips=tips, xlabel="share of the class", normalize=True
    )
    numbers = _table(
        ["class", "labels", "size", "distance", *dist.values],
        [["whole table", "", sum(dist.table_counts), "", *dist.table_counts]]
        + [
            [c["class"], ", ".join(c["key"]), c["size"], f"{c['distance']:.3f}", *c["counts"]]
            for c in dist.classes
        ],
        [True, False, True, True, *([True] * len(dist.values))],
    )
    caption = (
        f"The {len(dist.classes)} released classes (of {dist.released_classes:,}) whose "
        f"distribution of {dist.attribute} is farthest from the whole table's (total variation "
        f"distance: largest {dist.max_distance:.3f}, mean {dist.mean_distance:.3f} weighted by "
        "class size)."
    )
    return _figure(
        f"sensitive-{dist.attribute}",
        f"Sensitive attribute {dist.attribute}: per class against the whole table",
        svg,
        numbers,
        caption,
    )


def job_html(job: JobFigures, *, data: str | None = None, options: Sequence[str] = ()) -> str:
    """An anonymization job: verdicts before and after, the transformation, loss, classes,
    sensitive distributions, the algorithm's figures and the commands.

    Parameters
    ----------
    job : JobFigures
    data : str, optional
        The data file, for the commands.
    options : sequence of str
        Options that shaped the data (``--drop-missing``): the job's commands read the file
        as it is, which the page then says.

    Returns
    -------
    str
    """
    result = job.result
    verified = result.release.verification
    cover = not result.forms_classes
    k_after = job.release.k if verified.k_after is None else verified.k_after
    cards = _cards(
        [
            ("loss", f"loss ({result.metric})", round(float(result.loss), 6)),
            ("suppressed", "suppressed rows", result.suppressed_rows),
            (
                "classes",
                "distinct released rows" if cover else "released classes",
                verified.classes,
            ),
            ("k-after", f"k after: {verified.k_meaning}", k_after),
        ]
    )
    jobfile = job.job_source or "job.yaml"
    commands = [
        cli_command(data, "check", "--job", jobfile),
        cli_command(data, "anonymize", "--job", jobfile, "--output", "released.csv"),
        cli_command(data, "check", "--job", jobfile, "--release", "released.csv"),
    ]
    parts = [
        f'<p class="lead" data-summary="utility">{escape(job.utility.summary)}</p>'
        if job.utility is not None
        else "",
        cards,
        '<h3 id="verdicts">Privacy models before and after</h3>',
        _verdicts(job),
        *_disclosure(job),
        _transformation(job),
        _attribute_loss(job),
        *(_utility(job.utility) if job.utility is not None else []),
        _classification(job.classification) if job.classification is not None else "",
        _classes(job),
        *(
            [
                sections_html(
                    [risk_comparison_section(job.before_risk.to_dict(), job.after_risk.to_dict())]
                )
            ]
            if job.after_risk is not None
            else []
        ),
        *[_sensitive(d) for d in job.release.sensitive],
        sections_html(anonymization_sections(result)),
        sections_html(check_sections(job.before)),
        '<h3 id="job">The job</h3>',
        f'<pre class="job">{escape(job.job_text)}</pre>',
        *[f'<pre class="cmd">{escape(c)}</pre>' for c in commands],
    ]
    if options:
        parts.append(
            f'<p class="note">These figures are of the data read with {escape(" ".join(options))}'
            "; anonymize and check read the file as the job says.</p>"
        )
    return "\n".join(parts)


# ----------------------------------------------------------------------- the report
#: The banner on top of every report: it describes individuals, whatever its figures say.
_INTERNAL = (
    '<div class="warning" role="note" data-internal="true"><strong>Internal: this report '
    "contains data of individuals</strong> (the table's profile, its classes and the "
    "sensitive values in them). Keep it where the data itself may be kept; do not publish "
    "or send it. The values of identifying columns, and values held by few rows, are "
    "masked.</div>"
)


def _identifying(data: ReportData) -> list[str]:
    """Columns whose values the report never shows: declared identifiers and the columns
    found to identify a row on their own (for S and for the job's quasi-identifiers)."""
    found = [c.name for c in data.profile.columns if c.role == "identifier"]
    found += [c["column"] for c in data.risk.identifying_columns]
    if data.job is not None:
        found += [c["column"] for c in data.job.before_risk.identifying_columns]
    return list(dict.fromkeys(found))


def render(data: ReportData) -> str:
    """The whole report as one HTML document that works offline.

    A banner on top marks it internal (it contains data of individuals); the profile masks
    the values of identifying columns and values held by fewer rows than the risk threshold.

    Parameters
    ----------
    data : ReportData
        The answers, gathered by :func:`anonlab.api.report_data`.

    Returns
    -------
    str
    """
    qi = ",".join(data.quasi_identifiers)
    opts = data.options
    arg = data.data_argument

    def diag(*args: str) -> list[str]:
        return [cli_command(arg, "diagnose", "--qi", qi, *args, options=opts)]

    risk = data.risk
    cards = _cards(
        [
            ("k", "k (Q2)", data.q2.k),
            ("classes", "classes", risk.n_classes),
            ("unique", "unique records", risk.unique_records),
            ("highest-risk", "highest risk (1/k)", round(risk.highest_risk, 4)),
            ("average-risk", "average risk", round(risk.average_risk, 4)),
            ("at-risk", f"records in classes < {risk.threshold}", risk.records_at_risk),
        ]
    )
    s_text = ", ".join(data.quasi_identifiers)
    body = [
        '<header class="top">',
        f"<h1>{escape(data.title)}</h1>",
        f'<div class="meta">{escape(data.profile.source or "a table given from Python")} · '
        f"{data.profile.n_rows:,} rows · made by anonlab {escape(data.version)} on "
        f"{datetime.date.today().isoformat()}</div></header><main>",
        _INTERNAL,
        '<nav class="toc"><a href="#sec-profile">Table</a><a href="#sec-diagnosis">Diagnosis</a>'
        + ('<a href="#sec-job">Anonymization</a>' if data.job else "")
        + '<a href="#sec-reproduce">Reproduce</a></nav>',
    ]
    body += [f'<div class="warning">warning: {escape(w)}</div>' for w in data.warnings]
    body += [
        '<h2 id="sec-profile">The table</h2>',
        profile_html(data.profile, identifying=_identifying(data), min_rows=risk.threshold),
        f'<h2 id="sec-diagnosis">Diagnosis of S = {{{escape(s_text)}}}</h2>',
        cards,
        _histogram(risk, diag("--risk", *data.population_options)),
        _k_delta(data.q11, diag("--find-delta", "--max-k", str(len(data.q11.rows)))),
        _lattice(
            data.q4,
            data.q3,
            [
                cli_command(arg, "diagnose", "--attributes", qi, options=opts),
                cli_command(arg, "diagnose", "--attributes", qi, "--k", str(data.k), options=opts),
            ],
        ),
        _singling_out(
            data.singling_out,
            [cli_command(arg, "diagnose", "--find-qis", "--attributes", qi, options=opts)],
        )
        if data.singling_out.subsets
        else "<h3>Minimal attribute sets that single people out</h3><p>None: no attribute set "
        "puts a record alone in its class.</p>",
        sections_html([s for s in diagnosis_sections(risk) if s.title != "Class sizes"]),
    ]
    for d in data.disclosure:  # the sensitive attributes under S
        if d.exposed:
            body.append(
                f'<div class="warning" data-disclosure-s="{escape(d.attribute)}">'
                f"Attribute disclosure under S: {escape(d.sentence())}</div>"
            )
            body.append(sections_html([disclosure_section(d)]))
        else:
            body.append(f'<p class="note" data-disclosure-s="none">{escape(d.sentence())}</p>')
    if data.suda is not None and data.suda.records_with_msus:
        body.append(sections_html([suda_section(data.suda.to_dict())]))
    if risk.identifying_columns:
        body.append(
            "<p>Columns that identify rows on their own: "
            + escape("; ".join(f"{c['column']} ({c['reason']})" for c in risk.identifying_columns))
            + "</p>"
        )
    if data.job is not None:
        body += [
            '<h2 id="sec-job">Anonymization</h2>',
            job_html(data.job, data=arg, options=opts),
        ]
    whole = ["--qi", qi]
    if data.job is not None:
        whole += ["--job", data.job.job_source or "job.yaml"]
    body += [
        '<h2 id="sec-reproduce">Reproduce this report</h2>',
        f'<pre class="cmd">{escape(cli_command(arg, "report", *whole, "--k", str(data.k), *data.population_options, "--output", "report.html", options=opts))}</pre>',
        '<p class="note">DATA stands for the table when it was given from Python.</p>'
        if arg is None
        else "",
        "</main>",
    ]
    return page(data.title, "\n".join(body))


def render_explore(data: ExploreData) -> str:
    """The page of :func:`anonlab.api.explore`: risk against loss for every candidate, the
    frontier marked, and a table linking each candidate's report, release and job.

    Examples
    --------
    >>> from anonlab.report.document import ExploreData
    >>> render_explore(ExploreData(None, None, [], None)).startswith("<!doctype html>")
    True
    """
    ran = [c for c in data.candidates if c.loss is not None and c.risk is not None]
    population = data.sampling_fraction is not None
    parts = [
        '<header class="top">',
        f"<h1>{escape(data.title)}</h1>",
        f'<div class="meta">{escape(data.data_argument or "a table given from Python")}'
        f"{' · job ' + escape(data.job_source) if data.job_source else ''} · made by anonlab "
        f"{escape(data.version)} on {datetime.date.today().isoformat()}</div></header><main>",
        _INTERNAL,
        "<p>Each candidate is the job with another k or algorithm. The filled points are the "
        "frontier: no other candidate loses less <em>and</em> has a lower average risk; "
        "choose among them by how much risk you accept.</p>",
    ]
    if ran:
        highest = plots.frontier(
            [c.loss for c in ran],  # type: ignore[misc]
            [c.risk.highest_risk for c in ran],  # type: ignore[union-attr]
            [c.frontier for c in ran],
            labels=[f"k={c.k} {c.algorithm}" for c in ran],
            tips=[f"k = {c.k}, {c.algorithm}" for c in ran],
            ylabel="highest re-identification risk (1 / k after)",
        )
        svg = plots.frontier(
            [c.loss for c in ran],  # type: ignore[misc]
            [c.risk.average_risk for c in ran],  # type: ignore[union-attr]
            [c.frontier for c in ran],
            labels=[f"k={c.k} {c.algorithm}" for c in ran],
            tips=[
                f"k = {c.k}, {c.algorithm}: loss {c.loss:.4f}, average risk "
                f"{c.risk.average_risk:.4f}, highest {c.risk.highest_risk:.4f}"  # type: ignore[union-attr]
                for c in ran
            ],
        )
        parts.append(_figure("frontier", "Average risk against loss", svg, ""))
        parts.append(
            _figure(
                "frontier-highest",
                "Highest risk against loss",
                highest,
                "",
                "The filled points are the frontier on average risk and loss.",
            )
        )
    header = ["k", "algorithm", "frontier", "loss (GCP)", "suppressed rows", "k after",
              "highest risk", "average risk"]  # fmt: skip
    if population:
        header.append("population uniques")
    classified = [c for c in data.candidates if c.accuracy]
    names = list(classified[0].accuracy) if classified else []  # type: ignore[arg-type]
    header += [f"{n} accuracy (data / release)" for n in names]
    header += ["seconds", "files"]
    rows = []
    for c in data.candidates:
        if c.refused is not None:
            cells = [_cell(str(c.k), True), _cell(c.algorithm, False),
                     f'<td colspan="{len(header) - 2}" class="note">refused: {escape(c.refused)}</td>']  # fmt: skip
            rows.append("<tr>" + "".join(cells) + "</tr>")
            continue
        assert c.risk is not None and c.loss is not None
        values: list[Any] = [c.k, c.algorithm + (" †" if c.cover else ""),
                             "yes" if c.frontier else "", f"{c.loss:.4f}", c.suppressed,
                             c.k_after, f"{c.risk.highest_risk:.4f}",
                             f"{c.risk.average_risk:.4f}"]  # fmt: skip
        numeric = [True, False, False, True, True, True, True, True]
        if population:
            pop = c.risk.sample.population_uniqueness if c.risk.sample else None
            values.append("-" if pop is None or pop.dankar is None else f"{pop.dankar:.4%}")
            numeric.append(True)
        for n in names:
            a = (c.accuracy or {}).get(n)
            values.append("-" if a is None else f"{a['data']:.1%} / {a['release']:.1%}")
            numeric.append(True)
        values.append(f"{c.seconds:.2f}")
        numeric.append(True)
        cells = [_cell(_text(v), n) for v, n in zip(values, numeric)]
        links = " ".join(
            f'<a href="{escape(path)}">{name}</a>'
            for name, path in (("report", c.report), ("release", c.release), ("job", c.job))
            if path is not None
        )
        cells.append(f"<td>{links}</td>")
        rows.append(
            f'<tr data-candidate="k{c.k}-{escape(c.algorithm)}">' + "".join(cells) + "</tr>"
        )
    head = "".join(_cell(h, False, True) for h in header)
    parts.append(
        '<h3 id="candidates">Candidates</h3><div class="numbers"><table class="grid">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="note">loss: GCP, the share of the quasi-identifier information generalized '
        "away (suppressed cells count 1); highest risk: 1 / the smallest released class; "
        "average risk: the share of the records an attacker who knows a person is in the "
        "release re-identifies on average; k after: the smallest number of records each "
        "record is hidden among, as the verification found it. † a cell cover (each record "
        "covers k records): its risk is counted on its identical released rows, an upper "
        "bound; its anonymity graph guarantees k after.</p>"
    )
    parts.append("</main>")
    return page(data.title, "\n".join(parts), csp=_REPORT_CSP)
