"""Loop-carried dependences in parsed TVMScript, refused before they compute wrong numbers.

A vectorized or parallel loop runs its iterations at once, so it means what the serial loop
means only when no element written by one iteration is touched by another. The check
enumerates the element each access touches per iteration (index expressions are small
integer programs over constant loop ranges), one dimension at a time first, since a single
dimension that keeps iterations apart proves them independent. Where enumeration cannot
decide (an index that loads from a buffer, a loop range too large), it falls back to the
structural rule: a write whose indices do not use the loop variable, or a read of the
written buffer at indices that are not exactly the written ones, is a dependence.

Two kinds of the function's own buffers are not dependences, as TVM reads them: one whose
every write stores a function of the element written (a stage computed at the loop: the
iterations store identical bits), and, under a parallel loop, one that only that loop uses
(TVM allocates it in the loop body, one per iteration).

This runs when TVMScript text is parsed (``script.stmts``), never in the IR verifier that
also checks every scheduled program: the schedule primitives keep those legal themselves.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.index_values import UnknownIndex, evaluate
from .accesses import Access, collect

#: the most (iteration, inner loops) points enumerated for one access
_BUDGET = 1 << 18


#: an expression (or a loop range, or a count) the enumeration cannot handle
_Unknown = UnknownIndex


def loop_dependence(loop: N.For, params: tuple = (), uses: dict | None = None) -> str | None:
    """Why ``loop`` (vectorized or parallel) is not a set of independent iterations, or None.

    ``params`` are the function's buffer parameters; any other buffer is the function's own.
    ``uses`` counts the accesses of each buffer (by id) in the whole function.
    """
    extent = loop.extent
    if isinstance(extent, E.IntImm) and extent.value <= 1:
        return None
    accesses = collect(loop.body)
    skip = _recomputed(loop.loop_var, accesses, params)
    if loop.kind == "parallel" and uses is not None:
        # TVM allocates a buffer used only inside a loop in that loop's body (its accesses'
        # lowest common ancestor), one per iteration; the stages the search computes at a
        # parallel loop (rfactor partial sums included) rely on it
        inside = Counter(id(a.buffer) for a in accesses)
        skip += [
            a.buffer
            for a in accesses
            if not _among(a.buffer, params) and inside[id(a.buffer)] == uses.get(id(a.buffer))
        ]
    for w in (a for a in accesses if a.write and not _among(a.buffer, skip)):
        same = [a for a in accesses if a.buffer is w.buffer]
        pairs = [a for a in same if not a.write] + [a for a in same if a.write]
        for a in pairs:
            if _conflict(loop, w, a):
                what = f"{w.text()} written, {a.text()} read"
                if a.write:
                    what = f"{w.text()} written by more than one iteration"
                    if a is not w:
                        what = f"{w.text()} and {a.text()} written"
                own = not _among(w.buffer, params)
                return (
                    f"loop {loop.loop_var.name} is {loop.kind} but its iterations depend on "
                    f"each other ({what}): use a serial loop (range / T.serial)"
                    + (
                        f", or allocate {w.buffer.name} inside the loop so that each "
                        "iteration has its own"
                        if own
                        else ""
                    )
                )
    return None


def _among(buf: N.Buffer, bufs: tuple | list) -> bool:
    return any(buf is b for b in bufs)


def _recomputed(i: E.Var, accesses: list, params: tuple) -> list:
    """The function's own buffers whose one write stores, at each element, a value that is
    a function of that element alone (a stage computed at the loop, as compute_at prints
    it): iterations that write the same element store identical bits. A write that reads
    its own buffer (a reduction) is not one: an init would clobber another's running sum."""
    writes = [a for a in accesses if a.write]
    written = {id(a.buffer) for a in writes}
    found = []
    for a in writes:
        if not _among(a.buffer, params) and sum(w.buffer is a.buffer for w in writes) == 1:
            found.append(a)
    changed = True
    while changed:
        changed = False
        for w in list(found):
            ok = {id(x.buffer) for x in found if x is not w}
            if not _keyed(i, w, written, ok):
                found.remove(w)
                changed = True
    return [w.buffer for w in found]


def _keyed(i: E.Var, w: Access, written: set, ok: set) -> bool:
    """Whether ``w`` stores a function of its element, reading only buffers that no
    iteration writes or that are themselves keyed."""
    indices, value, bound = w.stored
    element = {x for x in indices if isinstance(x, E.Var)}
    varying = bound | {i}
    if not all(v in element for v in E.free_vars(value) if v in varying):
        return False
    loads = [n for n in E.post_order(value) if isinstance(n, N.BufferLoad)]
    return all(id(n.buffer) not in written or id(n.buffer) in ok for n in loads)


def spatial_accumulation(iter_vars: list, body: N.Stmt) -> tuple | None:
    """(axis, access) when a block's spatial axis (not a scan or opaque one) writes one
    element for all its values and reads it back: that is a reduction declared spatial."""
    accesses = collect(body)
    for iv in iter_vars:
        if iv.kind != "S" or iv.extent <= 1 or iv.declared in ("scan", "opaque"):
            continue
        for w in (a for a in accesses if a.write):
            if any(iv.var in E.free_vars(x) for x in w.indices):
                continue
            for r in accesses:
                if r.buffer is w.buffer and not r.write and _same(w.indices, r.indices):
                    return iv, w
    return None


def _same(x: tuple, y: tuple) -> bool:
    return len(x) == len(y) and all(map(E.structural_equal, x, y))


def _conflict(loop: N.For, w: Access, a: Access) -> bool:
    """Could iteration i1 write (through ``w``) an element that iteration i2 != i1
    touches (through ``a``)?"""
    decided = _enumerated(loop, w, a)
    if decided is not None:
        return decided
    i = loop.loop_var
    if not any(i in E.free_vars(x) for x in w.indices):
        return True
    return a is not w and not _same(w.indices, a.indices)


def _enumerated(loop: N.For, w: Access, a: Access) -> bool | None:
    """The exact answer by enumeration (guards that can be evaluated narrow it), or None."""
    for d in range(len(w.indices)):
        try:
            if not _overlap(loop, w, a, (d,)):
                return False  # this dimension alone keeps the iterations apart
        except _Unknown:
            continue
    try:
        return _overlap(loop, w, a, tuple(range(len(w.indices))))
    except _Unknown:
        return None


def _overlap(loop: N.For, w: Access, a: Access, dims: tuple) -> bool:
    keys_w, its_w = _touched(loop, w, dims)
    keys_a, its_a = _touched(loop, a, dims)
    if keys_w.size == 0 or keys_a.size == 0:
        return False
    lo = np.minimum(keys_w.min(axis=1), keys_a.min(axis=1))
    span = np.maximum(keys_w.max(axis=1), keys_a.max(axis=1)) - lo + 1
    if float(np.prod(span.astype(float))) > 2.0**62:
        raise _Unknown("too many elements to number")
    radix = np.concatenate([np.cumprod(span[::-1])[::-1][1:], [1]]).astype(np.int64)
    flat_w = (keys_w - lo[:, None]).T @ radix
    flat_a = (keys_a - lo[:, None]).T @ radix
    min_w, max_w = _range_per_element(flat_w, its_w)
    min_a, max_a = _range_per_element(flat_a, its_a)
    common = np.intersect1d(min_w[0], min_a[0])
    if common.size == 0:
        return False
    pick_w, pick_a = np.searchsorted(min_w[0], common), np.searchsorted(min_a[0], common)
    lw, hw = min_w[1][pick_w], max_w[pick_w]
    la, ha = min_a[1][pick_a], max_a[pick_a]
    # two different iterations meet at an element unless one single iteration touches it
    return bool(np.any((lw != hw) | (la != ha) | (lw != la)))


def _range_per_element(flat: np.ndarray, its: np.ndarray) -> tuple:
    """Per distinct element: (elements, the first iteration touching it), the last one."""
    order = np.lexsort((its, flat))
    flat, its = flat[order], its[order]
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    ends = np.r_[starts[1:], flat.size] - 1
    return (flat[starts], its[starts]), its[ends]


def _touched(loop: N.For, acc: Access, dims: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The indices (dims x points) an access touches and the iteration of ``loop`` at each."""
    exprs = [acc.indices[d] for d in dims]
    inner = {lp.var: lp for lp in acc.loops}
    used = set().union(*(E.free_vars(e) for e in exprs))
    grid = [loop.loop_var] + [v for v in inner if v in used]
    ranges = [_constant_range(loop.min, loop.extent)]
    ranges += [_constant_range(inner[v].min, inner[v].extent) for v in grid[1:]]
    if int(np.prod([len(r) for r in ranges], dtype=float)) > _BUDGET:
        raise _Unknown("too many points")
    env = {}
    for k, (v, r) in enumerate(zip(grid, ranges)):
        shape = [1] * len(grid)
        shape[k] = len(r)
        env[v] = r.reshape(shape)
    shape = tuple(len(r) for r in ranges)
    mask = np.ones(shape, bool)
    for g in acc.guards:
        if E.free_vars(g) <= set(grid):  # a guard over other loops is left out: sound
            try:
                mask &= np.broadcast_to(_eval(g, env), shape)
            except _Unknown:
                pass
    keys = np.stack([np.broadcast_to(_eval(e, env), shape)[mask] for e in exprs])
    return keys.astype(np.int64), np.broadcast_to(env[loop.loop_var], shape)[mask]


def _constant_range(lo: E.PrimExpr, extent: E.PrimExpr) -> np.ndarray:
    if not (isinstance(lo, E.IntImm) and isinstance(extent, E.IntImm)):
        raise _Unknown("a loop range that is not constant")
    return np.arange(lo.value, lo.value + max(0, extent.value), dtype=np.int64)


def _eval(e: E.PrimExpr, env: dict) -> np.ndarray:
    """An integer or bool expression over the grid variables (others are outer: fixed,
    so 0 stands for them; they shift every iteration's element alike)."""
    return evaluate(e, env, strict=True, missing=0)
