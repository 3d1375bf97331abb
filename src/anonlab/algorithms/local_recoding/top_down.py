"""Top-down local recoding (Wong et al. 2009, section 4.2, Algorithm 2 and Figure 2).

All rows start fully generalized (every quasi-identifier at its highest allowed level: one
node when every hierarchy ends in one root). Nodes are then specialized round by round, one
attribute one level down per node:

* a node's rows are split by their labels one level down (Algorithm 2, line 7);
* children that fail the models give their rows back to the parent, which keeps them
  unspecialized (line 8);
* if the rows kept by the parent fail the models, rows of the passing children are
  un-specialized too, so that the parent and every child pass (lines 9-10). The rows chosen
  first are those that could be specialized the fewest further times: the paper's look-ahead
  ("we further specialize all tuples in all candidate nodes ... if the tuple t has fewer
  times of specializations, it should be considered as a good choice"); then the children
  give whole, smallest first; at worst the node is not specialized on that attribute;
* with several quasi-identifiers every attribute is tried and the node is specialized on the
  one that specializes the most rows (Criterion 1), then the fewest non-empty branches
  (Criterion 2), then the first in table order;
* the rows a parent keeps are released at its levels (line 14); its children are specialized
  in the next round; a node that no attribute can specialize is released as it is.

Every node in processing satisfies the models, so every released class does. Rounds are at
most the sum of the attributes' heights plus one (a node goes one level down per round).

Readings where the paper leaves a choice:

* the look-ahead counts, for each row of a passing child, the further levels of the
  attribute being specialized at which its group in the child would still satisfy the models
  (section 4.2 describes it for one attribute); ties go to rows without a protected value
  first, then to the later rows of the table (Figure 2(f) moves tuple 3, not tuple 1);
* when the fully generalized table is several classes (``max_level`` below a hierarchy's
  root), each is a root node; a root that fails the models is left to the release's
  suppression.

References
----------
.. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), section 4.2 (Algorithm 2, Figures 2-4, Criteria 1-2) and
   sections 6.1-6.2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonlab._progress import Progress
from anonlab.algorithms.local_recoding._donate import give_back
from anonlab.algorithms.local_recoding._setup import BoolArray, IntArray, LocalProblem, LocalResult
from anonlab.data.grouping import group_rows

__all__ = ["TopDownResult", "top_down"]


@dataclass
class TopDownResult(LocalResult):
    """What Algorithm 2 did (besides :class:`~._setup.LocalResult`'s levels and time).

    Attributes
    ----------
    rounds : int
        Specialization rounds.
    nodes : int
        Nodes specialized (each once per round it is in processing).
    trials : int
        Attribute trials (a node specialized tentatively on one attribute).
    pushed_back : int
        Rows of failing children kept by their parent (line 8), in the chosen specializations.
    unspecialized : int
        Rows of passing children un-specialized so that their parent passes (line 10).
    line10_nodes : list of int
        Nodes that needed line 10, by how: spare rows, whole children, not specialized.
    root_rows_failing : int
        Rows of root nodes that fail the models (only with ``max_level`` bounds).
    trace : list of dict
        With ``trace=True``: every node of every round (its labels, rows, the attribute
        chosen, the children before and after lines 8-10, the rows kept).
    """

    rounds: int = 0
    nodes: int = 0
    trials: int = 0
    pushed_back: int = 0
    unspecialized: int = 0
    line10_nodes: list[int] = field(default_factory=lambda: [0, 0, 0])
    root_rows_failing: int = 0
    trace: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Trial:
    """Node specialization on one attribute (all nodes of a round at once).

    Row arrays cover ``can``, the active rows whose node can go down on the attribute.
    """

    can: IntArray  # positions (in the round's active rows) of the rows of usable nodes
    child: IntArray  # per row of ``can``: its child, or -1 (kept by the parent)
    failed: BoolArray  # per row of ``can``: its child failed the models (line 8)
    specialized: IntArray  # per node: rows specialized
    branches: IntArray  # per node: non-empty children
    stage: IntArray  # per node: how line 10 was met (0: not needed)
    n_children: int


def _depth(
    lp: LocalProblem, j: int, rows: IntArray, child: IntArray, n_child: int, level: IntArray
) -> IntArray:
    """The look-ahead of section 4.2: how many further levels of attribute ``j`` each row of a
    child could go down, its group within the child still satisfying the models."""
    req = lp.requirement
    depth = np.zeros(rows.size, dtype=np.int64)
    alive = np.ones(rows.size, dtype=bool)
    step = 1
    while True:
        lv = level - step
        alive &= lv >= lp.low[j]
        sub = np.flatnonzero(alive)
        if sub.size == 0:
            return depth
        lab = lp.label_codes(j, lv[sub], rows[sub])
        g, ng = group_rows([child[sub], lab], [n_child, int(lp.labels[j].size)])
        _, ok = req.judge(g, ng, rows[sub])
        passed = ok[g]
        depth[sub[passed]] += 1
        alive[sub[~passed]] = False
        step += 1


def _try(
    lp: LocalProblem, j: int, active: IntArray, node: IntArray, nlev: IntArray, n_nodes: int
) -> _Trial | None:
    """Specialize every node of the round on attribute ``j`` (lines 7-10)."""
    req = lp.requirement
    can_node = nlev[:, j] > lp.low[j]
    if not bool(can_node.any()):
        return None
    can = np.flatnonzero(can_node[node])
    rows, nodes = active[can], node[can]
    level = nlev[nodes, j] - 1
    lab = lp.label_codes(j, level, rows)
    # line 7: the children, one level down
    cid, nc = group_rows([nodes, lab], [n_nodes, int(lp.labels[j].size)])
    child_node = np.empty(nc, dtype=np.int64)
    child_node[cid] = nodes
    csize, cok = req.judge(cid, nc, rows)
    # line 8: the rows of failing children go back to the parent
    back = ~cok[cid]
    r_rows, r_seg = rows[back], nodes[back]
    r_size = np.bincount(r_seg, minlength=n_nodes).astype(np.int64)
    r_ok = req.passes(r_size, req.tops(r_seg, n_nodes, r_rows)) | (r_size == 0)
    need = can_node & ~r_ok
    # lines 9-10: un-specialize rows of passing children until the parent passes
    child = np.where(back, -1, cid)
    stage = np.zeros(n_nodes, dtype=np.int64)
    if bool(need.any()):
        kids = np.flatnonzero(~back & need[nodes])
        d_rows, d_child = rows[kids], cid[kids]

        def priority(at: IntArray) -> tuple[IntArray, ...]:
            # rows without a protected value first, then the shallowest, then the later rows
            harm = np.zeros(at.size, dtype=np.int64)
            for b in req.bounds:
                if b.simple:
                    harm += b.codes[d_rows[at]]
            dense, n_dense = group_rows([d_child[at]], [nc])
            depth = _depth(lp, j, d_rows[at], dense, n_dense, level[kids[at]])
            return harm, depth, -d_rows[at]

        given, stage = give_back(req, need, r_rows, r_seg, d_rows, d_child, child_node, priority)
        child[kids[given]] = -1
    moved = child >= 0
    spec = np.bincount(nodes[moved], minlength=n_nodes).astype(np.int64)
    kept = np.zeros(nc, dtype=bool)
    kept[child[moved]] = True
    branches = np.bincount(child_node[kept], minlength=n_nodes).astype(np.int64)
    return _Trial(can, child, back, spec, branches, stage, nc)


def top_down(
    lp: LocalProblem, progress: Progress | None = None, *, trace: bool = False
) -> TopDownResult:
    """Run Algorithm 2 (with Criteria 1-2 for several attributes) on an encoded problem.

    Parameters
    ----------
    lp : LocalProblem
    progress : callable, optional
        ``progress(1, total)`` per round.
    trace : bool
        Record every node of every round in ``TopDownResult.trace`` (small tables: the
        paper's Figure 2).

    Returns
    -------
    TopDownResult
    """
    t0 = time.perf_counter()
    req, n, m = lp.requirement, lp.n_rows, lp.m
    out = TopDownResult.start(n, m)
    total = lp.lemma6_bound() + 1
    # line 1: fully generalized; every class of the top is a root node
    rows = np.arange(n, dtype=np.int64)
    gid, ng = lp.classes(lp.high, rows)
    _, ok = req.judge(gid, ng, rows)
    fail = ~ok[gid]
    out.levels[rows[fail]] = lp.high
    out.root_rows_failing = int(np.count_nonzero(fail))
    active = rows[~fail]
    node, n_nodes = group_rows([gid[~fail]], [ng])
    nlev = np.tile(lp.high, (n_nodes, 1))
    while active.size:  # lines 4-16
        out.rounds += 1
        out.nodes += n_nodes
        if progress is not None:
            progress(1, total)
        best_j = np.full(n_nodes, -1, dtype=np.int64)
        best_spec = np.zeros(n_nodes, dtype=np.int64)
        best_br = np.zeros(n_nodes, dtype=np.int64)
        trials: list[_Trial | None] = []
        for j in range(m):
            t = _try(lp, j, active, node, nlev, n_nodes)
            trials.append(t)
            if t is None:
                continue
            out.trials += int(np.count_nonzero(nlev[:, j] > lp.low[j]))
            # Criterion 1: the most rows specialized; Criterion 2: the fewest branches
            better = (t.specialized > best_spec) | (
                (t.specialized == best_spec) & (t.specialized > 0) & (t.branches < best_br)
            )
            best_j = np.where(better, j, best_j)
            best_spec = np.where(better, t.specialized, best_spec)
            best_br = np.where(better, t.branches, best_br)
        row_j = best_j[node]
        target = np.full(active.size, -1, dtype=np.int64)
        offset = 0
        for j, t in enumerate(trials):
            if t is None:
                continue
            sel = row_j[t.can] == j
            child = t.child[sel]
            target[t.can[sel]] = np.where(child >= 0, child + offset, -1)
            failed = t.failed[sel]
            out.pushed_back += int(np.count_nonzero(failed))
            out.unspecialized += int(np.count_nonzero(~failed & (child < 0)))
            chosen = best_j == j
            for s in (1, 2, 3):
                out.line10_nodes[s - 1] += int(np.count_nonzero(chosen & (t.stage == s)))
            offset += t.n_children
        if trace:
            _record(lp, out, active, node, nlev, best_j, trials)
        stay = target < 0
        out.levels[active[stay]] = nlev[node[stay]]  # line 14: the parent keeps them
        move = np.flatnonzero(~stay)
        if move.size == 0:
            break
        new_node, n_new = group_rows([target[move]], [max(offset, 1)])
        parent = np.empty(n_new, dtype=np.int64)
        parent[new_node] = node[move]
        new_lev = nlev[parent]
        new_lev[np.arange(n_new), best_j[parent]] -= 1  # one level down on the chosen attribute
        active, node, nlev, n_nodes = active[move], new_node, new_lev, n_new
    out.elapsed_s = time.perf_counter() - t0
    return out


def _record(
    lp: LocalProblem,
    out: TopDownResult,
    active: IntArray,
    node: IntArray,
    nlev: IntArray,
    best_j: IntArray,
    trials: list[_Trial | None],
) -> None:
    """Append the round's nodes to the trace (a Python loop: for small tables only)."""
    names = lp.problem.quasi_identifiers
    for v in np.unique(node):
        at = np.flatnonzero(node == v)
        r = active[at]
        first = int(r[0])
        labels = tuple(
            str(lp.labels[j][lp.text[j][nlev[v, j], lp.codes[j][first]]]) for j in range(lp.m)
        )
        entry: dict[str, Any] = {
            "round": out.rounds,
            "node": labels,
            "rows": sorted(int(x) for x in r),
            "attribute": None if best_j[v] < 0 else names[int(best_j[v])],
        }
        t = trials[int(best_j[v])] if best_j[v] >= 0 else None
        if t is not None:
            j = int(best_j[v])
            pos = np.full(active.size, -1, dtype=np.int64)
            pos[t.can] = np.arange(t.can.size)
            children: dict[str, list[int]] = {}
            final: dict[str, list[int]] = {}
            for i in at:
                row, c = int(active[i]), int(pos[i])
                text = str(lp.labels[j][lp.text[j][nlev[v, j] - 1, lp.codes[j][row]]])
                children.setdefault(text, []).append(row)
                if t.child[c] >= 0:
                    final.setdefault(text, []).append(row)
            entry["children"] = children
            entry["pushed_back"] = sorted(int(active[i]) for i in at if t.failed[pos[i]])
            entry["unspecialized"] = sorted(
                int(active[i]) for i in at if not t.failed[pos[i]] and t.child[pos[i]] < 0
            )
            entry["final"] = final
            entry["kept"] = sorted(int(active[i]) for i in at if t.child[pos[i]] < 0)
        out.trace.append(entry)
