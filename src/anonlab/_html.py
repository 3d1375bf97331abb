"""Results as HTML tables, for Jupyter (the ``_repr_html_`` of results and answers).

A result gives its JSON form (``to_dict()``); :func:`html_card` shows it as a titled table: a
headline that says what it means, then one row per figure with the figure's meaning where
:data:`MEANINGS` knows it, a mapping of figures as a table of its own, a list of records as a
table with a column per key (the first :data:`MAX_ROWS` rows). Only the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

__all__ = ["MAX_ROWS", "MEANINGS", "html_card", "html_preview", "number_text"]

#: Rows shown of a list of records (the rest are counted).
MAX_ROWS = 20

#: What a figure means, by its key in a result's JSON form.
MEANINGS = {
    "k": "the smallest class: each record shares its quasi-identifiers with at least k-1 others",
    "k_after": "the smallest released class",
    "required_k": "the k asked for",
    "achieved_k": "the k of the table after the suppression",
    "n_rows": "rows of the table",
    "n_classes": "classes: distinct combinations of the quasi-identifiers",
    "classes": "classes: distinct combinations of the quasi-identifiers",
    "delta": "share of the rows that may be suppressed",
    "suppressed_rows": "rows suppressed (removed, or their quasi-identifiers masked)",
    "removed_rows": "rows removed from the release",
    "suppression_budget": "the most rows delta lets go",
    "smallest_class_rows": "rows of the classes of size k after the suppression",
    "answer": "whether the table is at least k-anonymous",
    "highest_risk": "the highest chance a record is re-identified (1 / its class size)",
    "average_risk": "the mean chance over records (classes / rows)",
    "unique_records": "records alone in their class (sample uniques)",
    "unique_fraction": "share of the records alone in their class",
    "threshold": "a record is at risk in a class smaller than this",
    "records_at_risk": "records in a class smaller than the threshold",
    "at_risk_fraction": "share of the records in a class smaller than the threshold",
    "loss": "the job's metric on the released table (0: nothing lost)",
    "holds": "whether every model holds",
    "evaluated": "candidate releases the search evaluated",
    "evaluated_nodes": "candidate releases the search evaluated",
    "elapsed_s": "seconds the search took",
    "transformation": "the hierarchy level of each quasi-identifier (0: as it is)",
    "checks": "per model, whether it holds on the release (re-checked before it is returned)",
    "violating_classes": "classes where the model does not hold",
    "violating_rows": "rows in those classes",
    "population_size": "the population the table was sampled from",
    "sampling_fraction": "the table's rows over the population's",
}

_STYLE = (
    "<style>.anonlab-card table{border-collapse:collapse;margin:4px 0 10px}"
    ".anonlab-card th,.anonlab-card td{border-bottom:1px solid #d9dee5;padding:2px 8px;"
    "text-align:left;vertical-align:top}.anonlab-card td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}.anonlab-card .meaning{color:#5b6673}"
    ".anonlab-card caption{text-align:left;font-weight:600}</style>"
)


def number_text(value: float) -> str:
    """A number as a person reads it: thousands separated, else 4 significant digits.

    Examples
    --------
    >>> number_text(232817.6), number_text(0.017512), number_text(30162)
    ('232,818', '0.01751', '30,162')
    """
    if isinstance(value, int) or (abs(value) >= 1e4 and math.isfinite(value)):
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _text(value: Any) -> str:
    """A value as a person reads it: numbers by :func:`number_text`, yes/no, lists joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k.replace('_', ' ')}: {_text(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        if _is_records(value) and len(value) > 3:
            shown = "; ".join(_text(v) for v in value[:3])
            return f"{shown}; ... ({len(value) - 3:,} more)"
        return ("; " if _is_records(value) else ", ").join(_text(v) for v in value) or "none"
    return str(value)


def _cell(value: Any, *, align: bool = True) -> str:
    """A ``td``: numbers right-aligned in a column of records (``align``)."""
    numeric = align and isinstance(value, (int, float)) and not isinstance(value, bool)
    return (
        f'<td class="num">{escape(_text(value))}</td>'
        if numeric
        else f"<td>{escape(_text(value))}</td>"
    )


def _records(caption: str, rows: Sequence[Mapping[str, Any]], *, keys: bool = True) -> str:
    """A table with a column per key of ``rows`` (keys shown as words unless ``keys`` is
    False: a table's own column names)."""
    columns: list[str] = []
    for row in rows[:MAX_ROWS]:
        columns += [k for k in row if k not in columns]
    head = "".join(f"<th>{escape(c.replace('_', ' ') if keys else c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(_cell(row.get(c)) for c in columns) + "</tr>" for row in rows[:MAX_ROWS]
    )
    more = len(rows) - MAX_ROWS
    tail = f"<p class='meaning'>... and {more:,} more</p>" if more > 0 else ""
    return f"<table><caption>{escape(caption)}</caption><tr>{head}</tr>{body}</table>{tail}"


def _is_records(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(v, Mapping) for v in value)
    )


def _is_nested(value: Any) -> bool:
    return isinstance(value, Mapping) and any(
        isinstance(v, Mapping) or _is_records(v) for v in value.values()
    )


def _figures(
    caption: str | None,
    data: Mapping[str, Any],
    skip: Iterable[str],
    meanings: Mapping[str, str],
) -> str:
    """One row per figure of ``data``; nested mappings and lists of records after it
    (``skip``: keys not shown, at any depth)."""
    skipped = set(skip)
    rows, after = [], []
    for key, value in data.items():
        if key in skipped:
            continue
        if _is_records(value):
            after.append(_records(key.replace("_", " "), value))
        elif _is_nested(value):
            after.append(_figures(key.replace("_", " "), value, skipped, meanings))
        else:
            meaning = meanings.get(key, MEANINGS.get(key, ""))
            rows.append(
                f"<tr><th>{escape(key.replace('_', ' '))}</th>{_cell(value, align=False)}"
                f'<td class="meaning">{escape(meaning)}</td></tr>'
            )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    table = f"<table>{cap}{''.join(rows)}</table>" if rows else ""
    return table + "".join(after)


def html_card(
    title: str,
    data: Mapping[str, Any],
    *,
    headline: str | None = None,
    skip: Iterable[str] = (),
    meanings: Mapping[str, str] | None = None,
    extra: str = "",
) -> str:
    """A result's JSON form as an HTML card: title, headline, its figures with their meaning.

    Parameters
    ----------
    title : str
        What the result is.
    data : Mapping[str, Any]
        Its JSON form (``to_dict()``).
    headline : str, optional
        One sentence saying what the figures mean for the data.
    skip : iterable of str
        Keys of ``data`` not shown (at any depth; ``question`` never is: the title says it).
    meanings : Mapping[str, str], optional
        Meanings of figures of this result, over :data:`MEANINGS`.
    extra : str
        HTML added at the end (already escaped), e.g. a preview of a released table.

    Returns
    -------
    str
        HTML (escaped), for Jupyter's rich display.

    Examples
    --------
    >>> html = html_card("Q2: for which k?", {"k": 3, "n_rows": 1200}, headline="k is 3.")
    >>> "<th>k</th>" in html and "1,200" in html and "at least k-1 others" in html
    True
    """
    lines = f"<p>{escape(headline)}</p>" if headline else ""
    return (
        f'<div class="anonlab-card">{_STYLE}<strong>{escape(title)}</strong>{lines}'
        f"{_figures(None, data, {'question', *skip}, meanings or {})}{extra}</div>"
    )


def html_preview(columns: Mapping[str, Any], n_rows: int, shown: int = 10) -> str:
    """The first ``shown`` rows of a table given as columns (each indexable by a slice).

    Examples
    --------
    >>> "<td>F</td>" in html_preview({"sex": ["F", "M"]}, 2)
    True
    """
    head = {name: list(columns[name][: min(shown, n_rows)]) for name in columns}
    rows = [{name: values[i] for name, values in head.items()} for i in range(min(shown, n_rows))]
    caption = f"the first {len(rows)} of {n_rows:,} rows"
    return _records(caption, rows, keys=False) if rows else ""
