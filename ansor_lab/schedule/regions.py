"""Spans of index expressions over relaxed loops: the arithmetic of bound inference.

A span is ``(symbolic terms, lo, hi)``: an expression's value lies in
``[sym + lo, sym + hi]`` where ``sym`` is a sum of terms over loop variables that were
not relaxed (the loops outside an attach point). ``"full"`` stands for "the whole
axis" (a union of spans with different symbolic parts, or an index that is not affine).
"""

from __future__ import annotations

import math

from ..dsl import expr as E
from ..ir.simplify import Analyzer, linear_form
from .state import Split, Stage

#: storage rank of a buffer scope and thread rank of a tag, as TVM's ``NeedRelax`` compares
#: them: a buffer is shared by every loop bound to a tag of rank >= its own (a "shared"
#: tile by all threads of a block, a "global" one by every block too); "local" by none
_STORAGE_RANK = {"global": 0, "shared": 1, "shared.dyn": 1, "warp": 2, "local": 3}


def _thread_rank(tag: str) -> int:
    if tag.startswith("blockIdx"):
        return 0
    if tag.startswith("threadIdx") or tag.startswith("vthread"):
        return 1
    return 99


def needs_thread_relax(scope: str, tag: str) -> bool:
    """Whether a buffer of ``scope`` computed under a loop bound to ``tag`` covers all of it.

    A "shared" buffer belongs to the block: its region spans every value of the
    threadIdx/vthread loops around it. A "local" one belongs to a thread. Only buffers
    nested inside a GPU kernel are concerned: a "global" stage computed at a loop
    under blockIdx would be relaxed over the grid as well.
    """
    return _STORAGE_RANK.get(scope, 3) <= _thread_rank(tag)


def relaxed_span(e: E.PrimExpr, ranges: dict) -> tuple | None:
    """(symbolic terms, lo, hi) of ``e`` with the variables in ``ranges`` relaxed."""
    form = linear_form(e)
    if form is None:
        return None
    terms, const = form
    lo = hi = const
    sym: dict = {}
    an = Analyzer(ranges)
    for term, coeff in terms.items():
        fv = E.free_vars(term)
        if not fv & ranges.keys():
            sym[term] = coeff
            continue
        if not fv <= ranges.keys():
            return None
        t_lo, t_hi = an.bound(term)
        if t_lo == float("-inf") or t_hi == float("inf"):
            return None
        a, b = coeff * t_lo, coeff * t_hi
        lo += min(a, b)
        hi += max(a, b)
    return (tuple(sorted(sym.items(), key=lambda kv: (repr(kv[0]), kv[1]))), int(lo), int(hi))


def covered_lengths(stage: Stage, inner: set, extents: dict) -> dict:
    """How much of each iter one iteration of the loops outside ``inner`` covers.

    Maps every iter name to the length of the interval its values sweep while the
    ``inner`` leaves run (1: a single point; its extent: all of it), or to None when the
    values are not an interval (strided or ragged). Walks the split/fuse relations from
    the leaves back to the root iters, as ``pass_up`` does, tracking for each iter
    ``(length, align)``: its values are ``[start, start + length)`` with ``start`` always
    a multiple of ``align`` (0: always 0). A fused loop's run splits into a box of its
    children only if it is whole rows of the inner children that never wrap.
    """
    cov: dict = {lp: ((extents[lp], 0) if lp in inner else (1, 1)) for lp in stage.leaves}
    for rel in reversed(stage.relations):
        if isinstance(rel, Split):
            cov[rel.parent] = _split_cover(rel, cov, extents)
            continue
        exts = [extents[c] for c in rel.children]
        out: list = [None] * len(exts)
        if cov[rel.fused] is not None:
            length, align = cov[rel.fused]
            rows = 1  # product of the extents of the children inside child k
            for k in range(len(exts) - 1, -1, -1):
                if length <= rows * exts[k] or k == 0:
                    if length % rows == 0 and align % rows == 0:
                        run, start = length // rows, align // rows
                        room = exts[k] if start == 0 else math.gcd(start, exts[k])
                        if k == 0 or run <= room:
                            sub = start if k == 0 else (0 if start == 0 else room)
                            out = [(1, 1)] * k + [(run, sub)] + [(e, 0) for e in exts[k + 1 :]]
                    break
                rows *= exts[k]
        for c, v in zip(rel.children, out):
            cov[c] = v
    return {name: (None if v is None else v[0]) for name, v in cov.items()}


def _split_cover(rel: Split, cov: dict, extents: dict) -> tuple | None:
    """(length, align) of a split's parent from those of its children (see above)."""
    length, align, stride, partial = 1, 0, 1, False
    for child in reversed(rel.children):
        if cov[child] is None:
            return None
        n, a = cov[child]
        if partial:
            if n != 1:
                return None  # a point inside a partly covered child: strided
            if extents[child] > 1:
                align = math.gcd(align, stride)
        elif n == extents[child]:
            length *= n
        else:
            length *= n
            align = a * stride
            partial = True
        stride *= extents[child]
    return min(length, extents[rel.parent]), align


def union_spans(a, b):
    """The smallest span holding both (``"full"`` unless their symbolic parts agree)."""
    if a is None or b is None or a == "full" or b == "full":
        return "full"
    sym_a, lo_a, hi_a = a
    sym_b, lo_b, hi_b = b
    if len(sym_a) != len(sym_b) or any(
        not E.structural_equal(ta, tb) or ca != cb for (ta, ca), (tb, cb) in zip(sym_a, sym_b)
    ):
        return "full"
    return (sym_a, min(lo_a, lo_b), max(hi_a, hi_b))


def span_contains(outer, inner) -> bool:
    """Whether relaxed span ``inner`` lies inside ``outer`` (same symbolic part)."""
    if outer is None or inner is None:
        return False
    sym_o, lo_o, hi_o = outer
    sym_i, lo_i, hi_i = inner
    same = len(sym_o) == len(sym_i) and all(
        E.structural_equal(to, ti) and co == ci for (to, co), (ti, ci) in zip(sym_o, sym_i)
    )
    return same and lo_o <= lo_i and hi_i <= hi_o
