"""Figures as inline SVG, drawn with matplotlib (the one module that imports it).

Every function takes numbers that a result already holds and returns an ``<svg>`` element to
put in an HTML page: text stays text (``svg.fonttype: none``), element ids are prefixed so that
many figures can share a page, each bar or point carries a ``<title>`` (the browser's tooltip)
with its numbers, and the output is the same for the same numbers (no date, fixed hash salt).
Figures are built with :class:`matplotlib.figure.Figure`, never pyplot: no global state, safe
in the web app's worker threads.
"""

from __future__ import annotations

import html
import io
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from anonlab._optional import import_optional

__all__ = [
    "bar_chart",
    "grouped_bars",
    "k_delta_curve",
    "lattice",
    "stacked_bars",
]

_COLORS = ["#3b6ea8", "#e08a2c", "#4c9a5b", "#c0504d", "#8064a2", "#4bacc6", "#9b7d4f",
           "#d16ba5", "#7f7f7f", "#b5b52e", "#2f8f8f"]  # fmt: skip
_counter = itertools.count(1)


def _mpl() -> tuple[Any, Any]:
    """matplotlib and its Figure class, or an error naming the ``report`` extra."""
    mpl = import_optional("matplotlib", feature="the HTML report's figures")
    figure = import_optional("matplotlib.figure", feature="the HTML report's figures")
    return mpl, figure.Figure


def _new(width: float, height: float) -> tuple[Any, Any]:
    _, figure_class = _mpl()
    fig = figure_class(figsize=(width, height), layout="constrained")
    ax = fig.subplots()
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="both", color="#e6e6e6", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig, ax


def _svg(fig: Any, tips: dict[str, str], point_tips: dict[str, Sequence[str]]) -> str:
    """The figure as an ``<svg>`` element with tooltips and ids unique in the page."""
    mpl, _ = _mpl()
    buf = io.StringIO()
    # every label as written: a '$' in the data is a dollar, never TeX (which may not parse)
    for text in fig.findobj(import_optional("matplotlib.text").Text):
        text.set_parse_math(False)
    plain = {"svg.fonttype": "none", "svg.hashsalt": "anonlab", "text.parse_math": False}
    with mpl.rc_context(plain):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, count=1, flags=re.S)
    for gid, text in tips.items():
        svg = svg.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(text)}</title>', 1)
    for gid, texts in point_tips.items():
        start = svg.find(f'<g id="{gid}">')
        if start < 0:
            continue
        end = svg.find("</g>", svg.find("<use", start))  # the points: <use> in one group
        body = re.sub(r"<use ([^>]*?)/>", _titled(iter(texts)), svg[start:end])
        svg = svg[:start] + body + svg[end:]
    prefix = f"f{next(_counter)}-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg \1role="img"', svg, count=1)
    return svg.strip()


def _titled(texts: Iterator[str]) -> Callable[[re.Match[str]], str]:
    """A substitution giving each ``<use>`` element the next tooltip."""

    def sub(match: re.Match[str]) -> str:
        return f"<use {match.group(1)}><title>{html.escape(next(texts, ''))}</title></use>"

    return sub


def _tip_bars(bars: Any, tips: Sequence[str], out: dict[str, str]) -> None:
    for bar, text in zip(bars, tips):
        gid = f"tip{next(_counter)}"
        bar.set_gid(gid)
        out[gid] = text


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    tips: Sequence[str],
    xlabel: str = "",
    ylabel: str = "",
    horizontal: bool = False,
    annotations: Sequence[str] | None = None,
    limit: Sequence[float] | None = None,
) -> str:
    """Bars, one per label, each with its tooltip.

    Parameters
    ----------
    labels, values : sequence
        One bar per label.
    tips : sequence of str
        The tooltip of each bar.
    xlabel, ylabel : str
        Axis labels.
    horizontal : bool
        Horizontal bars (long labels), the first label on top.
    annotations : sequence of str, optional
        Text printed at the end of each bar.
    limit : sequence of float, optional
        A faint bar behind each bar (e.g. the largest value allowed).

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    n = len(labels)
    fig, ax = _new(7.0, max(1.6, 0.32 * n + 0.9) if horizontal else 3.2)
    pos = list(range(n))
    tip_ids: dict[str, str] = {}
    if horizontal:
        if limit is not None:
            ax.barh(pos, limit, color="#e9eef5", height=0.7)
        bars = ax.barh(pos, values, color=_COLORS[0], height=0.7)
        ax.set_yticks(pos, labels)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
    else:
        bars = ax.bar(pos, values, color=_COLORS[0], width=0.7)
        ax.set_xticks(pos, labels)
        ax.grid(axis="x", visible=False)
    if annotations is not None:
        ax.bar_label(bars, labels=list(annotations), padding=2, fontsize=8, color="#444444")
    _tip_bars(bars, tips, tip_ids)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return _svg(fig, tip_ids, {})


def grouped_bars(
    labels: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    tips: dict[str, Sequence[str]],
    xlabel: str = "",
    ylabel: str = "",
) -> str:
    """Bars grouped by label, one colour per series (e.g. before and after).

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    fig, ax = _new(7.0, 3.2)
    width = 0.8 / max(len(series), 1)
    tip_ids: dict[str, str] = {}
    for j, (name, values) in enumerate(series.items()):
        pos = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        bars = ax.bar(pos, values, width=width, color=_COLORS[j % len(_COLORS)], label=name)
        _tip_bars(bars, tips[name], tip_ids)
    ax.set_xticks(range(len(labels)), labels)
    ax.grid(axis="x", visible=False)
    ax.legend(frameon=False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return _svg(fig, tip_ids, {})


def stacked_bars(
    rows: Sequence[str],
    parts: Sequence[str],
    matrix: Sequence[Sequence[float]],
    *,
    tips: Sequence[Sequence[str]],
    xlabel: str = "",
    normalize: bool = False,
) -> str:
    """One horizontal bar per row, split into parts (shares when ``normalize``).

    Parameters
    ----------
    rows : sequence of str
        The bars, the first on top.
    parts : sequence of str
        The parts of every bar (the legend).
    matrix : sequence of sequence of float
        ``matrix[i][j]``: part ``j`` of bar ``i``.
    tips : sequence of sequence of str
        The tooltip of each part of each bar.
    xlabel : str
    normalize : bool
        Divide each bar by its total.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    fig, ax = _new(7.0, max(1.8, 0.3 * len(rows) + 1.2))
    left = [0.0] * len(rows)
    totals = [sum(r) or 1.0 for r in matrix]
    tip_ids: dict[str, str] = {}
    for j, part in enumerate(parts):
        widths = [
            (matrix[i][j] / totals[i]) if normalize else matrix[i][j] for i in range(len(rows))
        ]
        bars = ax.barh(
            range(len(rows)),
            widths,
            left=left,
            height=0.7,
            color=_COLORS[j % len(_COLORS)],
            label=part,
        )
        _tip_bars(bars, [tips[i][j] for i in range(len(rows))], tip_ids)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(xlabel)
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig, tip_ids, {})


def k_delta_curve(deltas: Sequence[float], ks: Sequence[int], *, tips: Sequence[str]) -> str:
    """k against the suppression threshold delta (the paper's Figures 7 and 15, Q11).

    Parameters
    ----------
    deltas : sequence of float
        The smallest delta that reaches each k.
    ks : sequence of int
        The k's, ascending.
    tips : sequence of str
        The tooltip of each point.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    fig, ax = _new(7.0, 3.4)
    ax.step(deltas, ks, where="post", color=_COLORS[0], linewidth=1.4)
    points = ax.scatter(deltas, ks, s=14, color=_COLORS[0], zorder=3)
    gid = f"pts{next(_counter)}"
    points.set_gid(gid)
    ax.set_xlabel("δ: largest fraction of rows suppressed")
    ax.set_ylabel("k reached")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    return _svg(fig, {}, {gid: tips})


def lattice(
    sizes: Sequence[int],
    ks: Sequence[int],
    highlighted: Sequence[bool],
    *,
    tips: Sequence[str],
    n_attributes: int,
) -> str:
    """k of every attribute subset as a lattice: one row of nodes per subset size.

    Parameters
    ----------
    sizes : sequence of int
        The size of each subset (nodes of one size are spread along a row).
    ks : sequence of int
        The k of each subset (the colour, log scale).
    highlighted : sequence of bool
        Subsets ringed in red (the largest k-anonymous subsets, Q3).
    tips : sequence of str
        The tooltip of each node.
    n_attributes : int
        Attributes in the search (the rows of the lattice).

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    mpl, _ = _mpl()
    colors = import_optional("matplotlib.colors")
    per_level: dict[int, int] = {}
    for s in sizes:
        per_level[s] = per_level.get(s, 0) + 1
    seen: dict[int, int] = {}
    xs = []
    for s in sizes:
        seen[s] = seen.get(s, 0) + 1
        xs.append(seen[s] / (per_level[s] + 1))
    widest = max(per_level.values(), default=1)
    fig, ax = _new(7.0, max(2.4, 0.45 * n_attributes + 1.0))
    ax.grid(False)
    norm = colors.LogNorm(vmin=1, vmax=max(max(ks, default=1), 2))
    dot = max(6.0, min(60.0, 2400.0 / max(widest, 1)))
    points = ax.scatter(
        xs, sizes, c=ks, s=dot, cmap="viridis", norm=norm, edgecolors="none", zorder=2
    )
    gid = f"pts{next(_counter)}"
    points.set_gid(gid)
    ring = [(x, s) for x, s, h in zip(xs, sizes, highlighted) if h]
    if ring:
        ax.scatter(
            [x for x, _ in ring],
            [s for _, s in ring],
            s=dot * 3.2,
            facecolors="none",
            edgecolors="#d62728",
            linewidths=1.6,
            zorder=3,
            label="largest k-anonymous subsets (Q3)",
        )
        ax.legend(frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8)
    ax.set_yticks(range(1, n_attributes + 1))
    ax.set_ylim(0.4, n_attributes + 0.6)
    ax.set_xticks([])
    ax.spines[["bottom"]].set_visible(False)
    ax.set_ylabel("attributes in the subset")
    bar = fig.colorbar(points, ax=ax, pad=0.01)
    bar.set_label("k (log scale)")
    del mpl
    return _svg(fig, {}, {gid: tips})


def frontier(
    losses: Sequence[float],
    risks: Sequence[float],
    best: Sequence[bool],
    *,
    labels: Sequence[str],
    tips: Sequence[str],
    ylabel: str = "average re-identification risk",
) -> str:
    """Candidates as points of loss against risk, the frontier (no other point better on
    both) filled and joined.

    Parameters
    ----------
    losses, risks : sequence of float
        Each candidate's loss (x) and risk (y).
    best : sequence of bool
        Whether each is on the frontier.
    labels : sequence of str
        A short label beside each point.
    tips : sequence of str
        The tooltip of each point.
    ylabel : str

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    fig, ax = _new(7.0, 4.0)
    order = sorted((x, y) for x, y, b in zip(losses, risks, best) if b)
    if order:
        ax.step([p[0] for p in order], [p[1] for p in order], where="post",
                color=_COLORS[1], linewidth=1.2, zorder=2)  # fmt: skip
    colors = [_COLORS[1] if b else "#ffffff" for b in best]
    points = ax.scatter(losses, risks, s=36, c=colors, edgecolors=_COLORS[0], zorder=3)
    gid = f"pts{next(_counter)}"
    points.set_gid(gid)
    for x, y, text in zip(losses, risks, labels):
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xlabel("loss (GCP: 0 keeps every value, 1 generalizes every cell)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    return _svg(fig, {}, {gid: tips})
