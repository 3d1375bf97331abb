"""The web app's pages: forms around the report's own tables and figures (no script).

Every value that comes from a file or a form is escaped. A page that is waiting for a job
refreshes itself once a second (a meta refresh), so the app needs no JavaScript.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from anonlab import api
from anonlab.report.html import answer_html, escape, job_html, page, profile_html
from anonlab.web.state import DATA_SUFFIXES, MIN_ROWS_SHOWN, Dataset, Job, Workspace

__all__ = ["dataset_page", "error_page", "home_page", "job_form_page", "job_page"]

_QUESTIONS = """
<details><summary>Which question is asked</summary>
<table class="grid"><thead><tr><th>given</th><th>question</th></tr></thead><tbody>
<tr><td>S, k</td><td>Q1 is the table k-anonymous w.r.t. S?</td></tr>
<tr><td>S</td><td>Q2 for which k?</td></tr>
<tr><td>subsets, k</td><td>Q3 which largest subsets are k-anonymous?</td></tr>
<tr><td>subsets</td><td>Q4 k for every subset</td></tr>
<tr><td>S, k, δ</td><td>Q5 is the δ-suppressed table k-anonymous?</td></tr>
<tr><td>S, δ</td><td>Q6 for which k after δ-suppression?</td></tr>
<tr><td>subsets, k, δ</td><td>Q7 which largest subsets after δ-suppression?</td></tr>
<tr><td>subsets, δ</td><td>Q8 k for every subset after δ-suppression</td></tr>
<tr><td>S, k, find δ</td><td>Q9 the smallest δ for k</td></tr>
<tr><td>subsets, k, find δ</td><td>Q10 the smallest δ for every subset</td></tr>
<tr><td>S, find δ</td><td>Q11 the smallest δ for k = 1..max k</td></tr>
<tr><td>subsets, find δ</td><td>Q12 the smallest δ for every subset and k</td></tr>
</tbody></table></details>
"""


def _frame(title: str, body: str, *, head: str = "") -> str:
    top = (
        '<header class="top"><h1><a href="/">anonlab</a> · Diagnosis Centre</h1>'
        '<div class="meta">Runs on this computer; nothing leaves it.</div></header>'
    )
    return page(title, f"{top}<main>{body}</main>", head=head, csp=None)


def _messages(error: str | None, notes: Iterable[str]) -> str:
    out = [f'<div class="warning">warning: {escape(n)}</div>' for n in notes]
    if error:
        out.append(f'<div class="error" role="alert">error: {escape(error)}</div>')
    return "".join(out)


def _checkboxes(name: str, columns: Sequence[str], checked: Iterable[str]) -> str:
    on = set(checked)
    return "".join(
        f'<label><input type="checkbox" name="{name}" value="{escape(c)}"'
        f"{' checked' if c in on else ''}> {escape(c)}</label>"
        for c in columns
    )


def home_page(ws: Workspace, *, error: str | None = None) -> str:
    """The first page: open the bundled data, a file under the served folder, or an upload.

    Returns
    -------
    str
    """
    files = ws.files()
    options = "".join(f'<option value="{escape(f)}">{escape(f)}</option>' for f in files)
    open_now = "".join(
        f'<li><a href="/d/{escape(d.id)}">{escape(d.name)}</a> ({d.table.n_rows:,} rows)</li>'
        for d in ws.datasets.values()
    )
    separators = (
        '<label>separator <select name="separator"><option value="auto">guess it</option>'
        '<option value=",">,</option>'
        '<option value=";">;</option><option value="&#9;">tab</option>'
        '<option value="|">|</option></select></label>'
        '<label><input type="checkbox" name="drop_missing"> drop rows with a missing value'
        "</label>"
    )
    body = f"""
{_messages(error, [])}
<h2>Open a table</h2>
<form class="panel" method="post" action="/open">
  <input type="hidden" name="source" value="adult">
  <button id="open-adult">Open the bundled UCI Adult data</button>
  <span class="note">30,162 rows (the rows with a missing value dropped), 8 quasi-identifiers.</span>
</form>
<form class="panel" method="post" action="/open">
  <input type="hidden" name="source" value="path">
  <fieldset><legend>A file under the served folder</legend>
  <label>file <input name="path" list="files" size="48" placeholder="data/people.csv"></label>
  <datalist id="files">{options}</datalist>{separators}</fieldset>
  <button id="open-path">Open</button>
</form>
<form class="panel" method="post" action="/upload" enctype="multipart/form-data">
  <fieldset><legend>Upload a file ({", ".join(DATA_SUFFIXES)}, at most
  {ws.max_upload / 2**20:.0f} MB, also once decompressed; kept under anonlab-uploads/
  {"" if ws.keep_outputs else "until the app stops"})</legend>
  <input type="file" name="file" accept=".csv,.gz,.parquet">{separators}</fieldset>
  <button id="upload">Upload and open</button>
</form>
{f"<h2>Open tables</h2><ul>{open_now}</ul>" if open_now else ""}
"""
    return _frame("anonlab Diagnosis Centre", body)


def _question_form(ds: Dataset, values: Mapping[str, Any]) -> str:
    columns = ds.table.candidate_attributes()
    chosen = values.get("attr") or _default_qis(ds)
    scope = values.get("scope", "set")
    return f"""
<form class="panel" method="get" action="/d/{escape(ds.id)}/ask" id="ask">
  <fieldset><legend>Attributes</legend>{_checkboxes("attr", columns, chosen)}</fieldset>
  <fieldset><legend>Ask about</legend>
    <label><input type="radio" name="scope" value="set"{" checked" if scope == "set" else ""}>
    this set S</label>
    <label><input type="radio" name="scope" value="subsets"
    {" checked" if scope == "subsets" else ""}> every subset of these attributes</label>
  </fieldset>
  <fieldset><legend>Parameters (leave empty to ask without them)</legend>
    <label>k <input type="number" name="k" min="1" value="{escape(values.get("k", ""))}"></label>
    <label>δ <input type="number" name="delta" min="0" max="1" step="any"
      value="{escape(values.get("delta", ""))}"></label>
    <label><input type="checkbox" name="find_delta"{" checked" if values.get("find_delta") else ""}>
      find the smallest δ</label>
    <label>max k <input type="number" name="max_k" min="1"
      value="{escape(values.get("max_k", ""))}"></label>
  </fieldset>
  {_population_fields(ds, values)}
  <button name="what" value="question" id="ask-question">Ask</button>
  <button name="what" value="risk" id="ask-risk">Re-identification risk of S</button>
  <button name="what" value="qis" id="ask-qis">Sets that single people out</button>
</form>
{_QUESTIONS}"""


def _population_fields(ds: Dataset, values: Mapping[str, Any]) -> str:
    """The sampling fraction or weight column of a table that is a sample (the risk's
    population estimates), at most one of them."""
    weight = str(values.get("weight", ""))
    options = "".join(
        f"<option{' selected' if c == weight else ''}>{escape(c)}</option>" for c in ds.table.names
    )
    return f"""<fieldset><legend>Is the table a sample? (for the risk; give one)</legend>
    <label>sampling fraction <input type="number" name="sampling_fraction" min="0" max="1"
      step="any" value="{escape(str(values.get("sampling_fraction", "")))}"></label>
    <label>or a column of sampling weights <select name="weight"><option value="">none</option>
      {options}</select></label>
    <p class="note">With either, the risk adds the journalist and marketer models and how many
    records are estimated unique in the whole population, not only in this table.</p>
  </fieldset>"""


#: The roles a column may take in the job form, and what each does.
ROLES = {
    "quasi-identifier": "quasi-identifier (generalized)",
    "sensitive": "sensitive (released as it is, judged by the models)",
    "insensitive": "insensitive (released as it is)",
    "identifier": "identifier (dropped)",
    "weight": "sampling weight (dropped)",
}


def _roles(
    ds: Dataset, columns: Sequence[str], qis: Sequence[str], sensitive: Sequence[str]
) -> str:
    """A role for every column, the safe one by default: an identifying column is an
    identifier, never a quasi-identifier ticked for it (unless the table declares it one)."""
    rows = []
    declared = [n for n in ds.table.names if ds.table.schema.role(n).value == "quasi-identifier"]
    for c in ds.table.names:
        if c in declared and c in qis:  # a declared quasi-identifier stays one
            role = "quasi-identifier"
        elif c in ds.identifying:
            role = "identifier"
        elif c in qis and c in columns:
            role = "quasi-identifier"
        elif c in sensitive:
            role = "sensitive"
        else:
            role = "identifier"
        options = "".join(
            f'<option value="{r}"{" selected" if r == role else ""}>{escape(text)}</option>'
            for r, text in ROLES.items()
        )
        note = ' <span class="note">identifies people</span>' if c in ds.identifying else ""
        levels = ""
        if c in columns:  # its hierarchy, and how far it may be generalized
            height, words = ds.hierarchy_of(c)
            choices = "".join(f'<option value="{h}">{h}</option>' for h in range(height))
            levels = (
                f' <label class="note">at most level <select name="max_level:{escape(c)}">'
                f'<option value="">{height} (any)</option>{choices}</select></label>'
                f' <span class="note">{escape(words)}</span>'
            )
            text = ds.hierarchy_text(c)
            if text is not None:  # its levels, to edit (a value;its label at level 1;...)
                lines = min(text.count("\n") + 1, 12)
                levels += (
                    f'<details><summary class="note">edit the levels of {escape(c)}</summary>'
                    f'<textarea name="hierarchy:{escape(c)}" rows="{lines}">{escape(text)}'
                    "</textarea></details>"
                )
        rows.append(
            f'<label>{escape(c)} <select name="role:{escape(c)}">{options}</select>{note}</label>'
            + levels
        )
    return "<br>".join(rows)


def _default_qis(ds: Dataset) -> list[str]:
    marked = [n for n in ds.table.names if ds.table.schema.role(n).value == "quasi-identifier"]
    return marked or ds.table.candidate_attributes()[:4]


def dataset_page(
    ds: Dataset,
    *,
    values: Mapping[str, Any] | None = None,
    answer: Any = None,
    commands: Sequence[str] = (),
    error: str | None = None,
    notes: Iterable[str] = (),
) -> str:
    """A table's page: its profile, the question form and the answer asked.

    Returns
    -------
    str
    """
    result = answer_html(answer, commands=commands) if answer is not None else ""
    body = f"""
<h2>{escape(ds.name)}</h2>
<p><a href="/d/{escape(ds.id)}/job" id="to-job">Anonymize this table…</a></p>
{_messages(error, notes)}
<div id="answer">{result}</div>
<h2>Ask the Diagnosis Centre</h2>
{_question_form(ds, values or {})}
{_table_preview(ds)}
<h2>The table</h2>
{profile_html(api.profile(ds.table), identifying=ds.identifying, min_rows=MIN_ROWS_SHOWN)}
"""
    return _frame(f"anonlab: {ds.name}", body)


def job_form_page(
    ds: Dataset,
    choices: Mapping[str, list[str]],
    *,
    values: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> str:
    """The job editor: models, suppression, metric and algorithm, or a YAML job.

    Returns
    -------
    str
    """
    v = dict(values or {})
    columns = ds.table.candidate_attributes()
    qis = v.get("qi") or _default_qis(ds)
    sensitive = v.get("sensitive") or [
        n for n in ds.table.names if ds.table.schema.role(n).value == "sensitive"
    ]

    def select(name: str, options: list[str], current: str) -> str:
        return (
            f'<select name="{name}">'
            + "".join(
                f"<option{' selected' if o == current else ''}>{escape(o)}</option>"
                for o in options
            )
            + "</select>"
        )

    hier = ", ".join(sorted(ds.hierarchies)) or "none: each attribute generalizes to *"
    body = f"""
<h2>Anonymize {escape(ds.name)}</h2>
<p><a href="/d/{escape(ds.id)}">Back to the diagnosis</a></p>
{_messages(error, [])}
<form class="panel" method="post" action="/d/{escape(ds.id)}/job" id="job">
  <fieldset><legend>The role of each column</legend>{_roles(ds, columns, qis, sensitive)}
  <p class="note">Hierarchies: {escape(hier)}; a quasi-identifier without one gets a hierarchy
  inferred from its values (intervals, dates, masking, rare values grouped). A column that
  identifies people starts as an identifier (dropped). The other columns are dropped from the
  release unless you release them as they are (insensitive).</p></fieldset>
  <fieldset><legend>Privacy models</legend>
    <label>k-anonymity, k = <input type="number" name="k" min="1" value="{escape(v.get("k", "5"))}">
    </label>
    <label>distinct l-diversity of each sensitive attribute, l =
      <input type="number" name="l" min="1" value="{escape(v.get("l", ""))}"></label>
  </fieldset>
  {_population_fields(ds, v)}
  <fieldset><legend>Release</legend>
    <label>suppression limit (fraction of rows) <input type="number" name="suppression" min="0"
      max="1" step="any" value="{escape(v.get("suppression", "0.05"))}"></label>
    <label>metric {select("metric", choices["metrics"], str(v.get("metric", "loss")))}</label>
    <label>algorithm
      {select("algorithm", choices["algorithms"], str(v.get("algorithm", "optimal")))}</label>
  </fieldset>
  <fieldset><legend>Or a job file (YAML; it replaces the fields above; paths are relative to
  the served folder)</legend>
  <textarea name="yaml" rows="8" placeholder="quasi_identifiers: {{age: {{}}, sex: {{}}}}
models:
  - k_anonymity: {{k: 5}}">{escape(v.get("yaml", ""))}</textarea></fieldset>
  <button id="run-job">Run the job</button>
</form>
"""
    return _frame(f"anonlab: anonymize {ds.name}", body)


def job_page(run: Job) -> str:
    """A job: its progress while it runs, then before and after, and the downloads.

    Returns
    -------
    str
    """
    ds = run.dataset
    back = f'<p><a href="/d/{escape(ds.id)}/job">Edit the job</a> · <a href="/d/{escape(ds.id)}">Diagnosis</a></p>'
    if run.status in ("running", "writing"):
        bar = (
            f'<progress value="{run.done}" max="{run.total}"></progress> {run.done:,} of '
            f"{run.total:,}"
            if run.total
            else "<progress></progress>"
        )
        body = (
            f'<h2>Running the job on {escape(ds.name)}</h2><p id="status" data-status="running">'
            f"{escape(run.step)}…</p><p>{bar}</p>"
        )
        return _frame("anonlab: running", body, head='<meta http-equiv="refresh" content="1">')
    if run.status == "failed":
        body = (
            f'<h2>The job on {escape(ds.name)} failed</h2><p id="status" data-status="failed">'
            f"Nothing was written.</p>{_messages(run.error, run.notes)}{back}"
        )
        return _frame("anonlab: job failed", body)
    if run.status == "held":
        body = f"""
<h2>The release of {escape(ds.name)} is not written yet</h2>
<p id="status" data-status="held">Computed in {run.elapsed:.1f} s; nothing is written until you
confirm it.</p>
{_messages(None, run.held)}
<form class="panel" method="post" action="/jobs/{escape(run.id)}/release">
  <button id="release-anyway">Write this release anyway</button>
  <span class="note">Or change the job so that it protects these people.</span>
</form>
{back}
{_messages(None, run.notes)}
{_release_preview(run)}
{job_html(run.data.job, data=ds.data_argument, options=ds.options)}
"""
        return _frame(f"anonlab: confirm the release of {ds.name}", body)
    links = " · ".join(
        f'<a href="/jobs/{escape(run.id)}/files/{kind}" download id="download-{kind}">{label}</a>'
        for kind, label in (
            ("release", "the released table (CSV)"),
            ("job", "its job file (YAML)"),
            ("report", "the report (HTML)"),
        )
    )
    where = ", ".join(escape(p.name) for p in run.files.values())
    until = "" if run.kept else "; removed when the app stops: download what you keep"
    body = f"""
<h2>Anonymized {escape(ds.name)}</h2>
<p id="status" data-status="done">Done in {run.elapsed:.1f} s. Download {links}.</p>
<p><a href="/jobs/{escape(run.id)}/explore" id="explore">Explore: the same job at k = 2, 5
and 10 by optimal, top_down, murakami_uno, mondrian and local_suppression, risk against
loss</a> (runs them: a few seconds to a minute).</p>
<p class="note">Written under the served folder: {escape(run.folder)} ({where}){until}.</p>
{back}
{_messages(None, run.notes)}
{_release_preview(run)}
{job_html(run.data.job, data=ds.data_argument, options=ds.options)}
"""
    return _frame(f"anonlab: anonymized {ds.name}", body)


#: Rows a preview shows.
PREVIEW_ROWS = 10


def _rows_table(names: Sequence[str], rows: Sequence[Sequence[Any]], figure: str) -> str:
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape('' if v is None else str(v))}</td>" for v in r) + "</tr>"
        for r in rows
    )
    return (
        f'<div class="numbers"><table class="grid" data-figure="{figure}"><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _release_preview(run: Job) -> str:
    """The first rows of the release, as they will be written."""
    columns = run.data.job.result.columns
    names = list(columns)
    n = min(PREVIEW_ROWS, len(columns[names[0]]) if names else 0)
    rows = [[columns[c][i] for c in names] for i in range(n)]
    return f"<h3>The first {n} rows of the release</h3>" + _rows_table(
        names, rows, "release-preview"
    )


def _table_preview(ds: Dataset) -> str:
    """The table's first rows; the values of identifying columns hidden."""
    names = ds.table.names
    n = min(PREVIEW_ROWS, ds.table.n_rows)
    hidden = set(ds.identifying)
    columns = {c: ds.table[c].labels()[:n] for c in names}
    rows = [
        ["(hidden: identifying)" if c in hidden else columns[c][i] for c in names] for i in range(n)
    ]
    header = (
        "; no header row (--no-header): the columns are named c0, c1, ..."
        if "--no-header" in ds.options
        else ""
    )
    return (
        f'<h2>The first {n} rows</h2><p class="note">As read (separator '
        f"{escape(repr(_separator(ds)))}{escape(header)}); an identifying column's values are "
        "hidden.</p>" + _rows_table(names, rows, "table-preview")
    )


def _separator(ds: Dataset) -> str:
    options = list(ds.options)
    return options[options.index("--separator") + 1] if "--separator" in options else ","


def error_page(message: str) -> str:
    """A page with one error line.

    Returns
    -------
    str
    """
    return _frame("anonlab: error", f'{_messages(message, [])}<p><a href="/">Start again</a></p>')
