"""Sorting along an axis (``topi.sort``, ``topi.argsort``, ``topi.topk``), TVM's signatures.

TVM builds them with ``te.extern`` (a call of ``std::stable_sort`` per row); ansor_lab
compiles only ``te.compute``, so no stage can move an element while it looks at the
others: each element's place is counted instead. Along the sorted axis of n elements,
in three stages (``op`` is ``sort``, ``argsort`` or ``topk``):

    op_rank[..., j]  = sum(before(k, j) for k < n)             (where element j goes)
    op_index[..., i] = sum(j if op_rank[..., j] == i else 0 for j < n)   (i < n, or < k)
    op_values[..., i] = data[..., op_index[..., i]]                       (sort, topk)

(``argsort_index`` is argsort's result, in its ``dtype``; topk's indices are
``topk_indices``: its index stage in int32, else a cast of ``topk_index``.)

``before(k, j)`` says element k sorts before element j: ``x[k] < x[j]``, or neither is
less and ``k < j`` (``>`` for a descending sort). So equal values keep their index
order (a stable sort, as TVM's ``std::stable_sort`` and ``np.argsort(kind="stable")``),
and the ranks of a row are a permutation of 0..n-1: exactly one j has rank i, which
makes the index stage a sum of one index and zeros (exact, in any index dtype that
holds n - 1). The values are read at that index, never summed: they are bit-exact
(-0.0 stays -0.0; -0.0 and 0.0 compare equal, so they keep their index order).

NaN is the largest value, above +inf (for floats the ``x < y`` of ``before`` is ``x < y
or (isnan(y) and not isnan(x))``; NaNs are equal to each other): an ascending sort puts
the NaNs last, as ``np.sort`` does, and a descending one puts them first (where
``np.sort(x)[::-1]`` and ``torch.sort(descending=True)`` put them; ``topk`` counts them
among the largest), equal values in index order both ways. TVM's comparator leaves
NaN's place undefined.

The work is n^2 comparisons per row (the rank) plus n k for the index (k = n but for
``topk``): a row of 1000 elements takes a million comparisons, a model's axis (tens to
hundreds) a few thousand. The auto-scheduler tunes the three stages as any reduction
and gather. Bool data is compared as 0 < 1.

``topk`` with a small k on a longer axis (k <= 8 and n >= 4 k, ``_use_rounds``) takes
its positions in k selection rounds instead, 2 n comparisons each: round t picks the
element that sorts first among those after round t - 1's pick (v, p) (all of the row
for round 0), an element x[j] being after it when ``before(v, x[j])``, or neither is
before the other and j > p, the ``before`` above. Two plain reductions per round:

    topk_round{t}_max[...]   = max(key(x[j]) for j after the pick)     (min ascending)
    topk_round{t}_index[...] = min(j + n * late[j] for j after it, key(x[j]) == max)

where key(x) is x with NaN as +inf, and among the +inf and NaN that then hold the
extremum, ``late`` puts the +inf after the NaNs descending and the NaNs after the +inf
ascending (each kind in index order); the pick is that code less n where it is n or
more. The order is the ranks', so the results are the same bit for bit (tested): the
positions stage (``topk_index``, or ``topk_indices`` in int32) holds the k picks, and
the values are read there. An after-set is never
empty (t < k <= n), so the reductions' neutral values never reach a pick. On a 2-core
x86 CPU, default schedules, 64 float32 rows of 1000: 0.04 ms for k = 1, 0.18 ms for
k = 2, 0.61 ms for k = 5, 1.1 ms for k = 8, against 31-35 ms for the ranks; rounds win
from n = 4 k on (k = 1 to 4). Tuned (64 trials, one thread), k = 5 runs in 0.28 ms
(torch.topk 0.19 ms), the ranks in 26 ms. Each round adds two searched stages: sketch
generation keeps 35 sketches (``MAX_PREFIXES``) but takes 6.6 s for k = 8 and 40 s for
k = 16, and a 64-trial tuning of k = 5 about 6 minutes, hence k <= 8.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dsl import dtypes, intrin
from ..dsl.construct import const, logical_and, logical_not, logical_or, select
from ..dsl.intrin_extra import isnan
from ..dsl.tensor import Tensor, compute, reduce_axis
from ..errors import DSLError, OutOfScopeError
from .tag import COMM_REDUCE_IDX, INJECTIVE
from .utils import check_tensor, get_const_int, get_const_tuple, normalize_axis

_RET_TYPES = ("both", "values", "indices")
# topk by selection rounds where k <= _ROUNDS_MAX_K and _ROUNDS_MIN_RATIO * k <= n (the
# module says why): faster from n = 4 k on, and each round adds two searched stages
_ROUNDS_MAX_K = 8
_ROUNDS_MIN_RATIO = 4


def _less(a: Any, b: Any) -> Any:
    """``a`` sorts before ``b`` ascending: ``a < b``, with NaN above every number."""
    if dtypes.is_bool(a.dtype):  # compared as the integers 0 and 1
        a, b = a.astype("int8"), b.astype("int8")
    if not dtypes.is_float(a.dtype):
        return a < b
    return logical_or(a < b, logical_and(isnan(b), logical_not(isnan(a))))


def _check_data(data: Any, axis: Any, what: str) -> int:
    """The checks the three share; the sorted axis in ``[0, ndim)``."""
    check_tensor(data, f"{what}: data")
    if data.ndim == 0:
        raise DSLError(
            f"{what}: data is 0-D; there is no axis {axis} to sort. Pass a tensor of at "
            "least one dimension (topi.reshape(data, (1,)) for a scalar)"
        )
    return normalize_axis(axis, data.ndim, what)


def _index_dtype(dtype: Any, n: int, what: str) -> str:
    """``dtype`` canonical, checked to hold every index 0..n-1 exactly."""
    out = dtypes.canonical(dtype)
    if dtypes.is_bool(out):
        raise DSLError(f"{what}: dtype bool cannot hold indices; pass 'int32' or 'int64'")
    if dtypes.is_int(out):
        exact = n - 1 <= dtypes.int_range(out)[1]
    else:  # a float holds integers exactly up to 2^(mantissa bits + 1)
        exact = n - 1 <= 2 ** (np.finfo(dtypes.to_numpy(out)).nmant + 1)
    if not exact:
        raise DSLError(
            f"{what}: dtype {out} cannot hold the index {n - 1} of an axis of {n} elements "
            "exactly; pass dtype 'int32' or 'int64'"
        )
    return out


def _is_ascend(value: Any, what: str) -> bool:
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return bool(value)
    raise DSLError(f"{what}: is_ascend must be a bool (or 0 / 1), got {value!r}")


def _rank(data: Tensor, ax: int, ascend: bool, prefix: str) -> Tensor:
    """``rank[..., j]``: how many elements of j's row sort before element j (int32)."""
    n = get_const_tuple(data.shape)[ax]
    k = reduce_axis((0, n), name="k")

    def fcompute(*i: Any) -> Any:
        mine = data[i]
        other = data[i[:ax] + (k,) + i[ax + 1 :]]
        first, second = (other, mine) if ascend else (mine, other)
        # k before j: strictly less, or neither less (equal) and k earlier in the row
        before = logical_or(
            _less(first, second), logical_and(logical_not(_less(second, first)), k < i[ax])
        )
        return intrin.sum(select(before, const(1, "int32"), const(0, "int32")), axis=k)

    return compute(data.shape, fcompute, name=f"{prefix}_rank", tag=COMM_REDUCE_IDX)


def _order(rank: Tensor, ax: int, count: int, dtype: str, name: str) -> Tensor:
    """``index[..., i]`` (i < ``count``): the position j in the row whose rank is i,
    in ``dtype``; exactly one j has it, so the sum adds one index and zeros."""
    shape = get_const_tuple(rank.shape)
    j = reduce_axis((0, shape[ax]), name="j")
    zero = const(0, dtype)

    def fcompute(*i: Any) -> Any:
        r = rank[i[:ax] + (j,) + i[ax + 1 :]]
        position = j if dtype == "int32" else j.astype(dtype)
        return intrin.sum(select(r == i[ax], position, zero), axis=j)

    out_shape = shape[:ax] + (count,) + shape[ax + 1 :]
    return compute(out_shape, fcompute, name=name, tag=COMM_REDUCE_IDX)


def _gather(data: Tensor, index: Tensor, ax: int, name: str) -> Tensor:
    """``data[..., index[..., i], ...]``: the values in sorted order, read, never summed.
    The index is a position of the row by construction; clamping it costs two integer
    operations and keeps every read inside ``data`` whatever a schedule does."""
    n = get_const_tuple(data.shape)[ax]

    def fcompute(*i: Any) -> Any:
        at = intrin.min(intrin.max(index[i], 0), n - 1)
        return data[i[:ax] + (at,) + i[ax + 1 :]]

    return compute(index.shape, fcompute, name=name, tag=INJECTIVE)


def _use_rounds(k: int, n: int) -> bool:
    """Whether topk takes its k positions in k selection rounds (2 n k comparisons per
    row) rather than from the ranks (n^2): see the module for the measured rule."""
    return k <= _ROUNDS_MAX_K and k * _ROUNDS_MIN_RATIO <= n


def _topk_rounds(data: Tensor, ax: int, ascend: bool, count: int) -> list[Any]:
    """The first ``count`` positions of the sorted order, one round each (see the
    module), as functions of the row index ``r`` (``data``'s index without ``ax``)."""
    shape = get_const_tuple(data.shape)
    n = shape[ax]
    rows = shape[:ax] + shape[ax + 1 :]
    floats = dtypes.is_float(data.dtype)
    kdtype = "int8" if dtypes.is_bool(data.dtype) else data.dtype  # bool as 0 < 1
    reducer = intrin.min if ascend else intrin.max
    sentinel = (intrin.max_value if ascend else intrin.min_value)(kdtype)

    def at(r: tuple, j: Any) -> Any:
        return data[r[:ax] + (j,) + r[ax:]].astype(kdtype)

    def key(x: Any) -> Any:  # NaN as +inf; the index stage tells the two apart
        return select(isnan(x), intrin.max_value(kdtype), x) if floats else x

    def decode(stage: Tensor) -> Any:  # the pick from its index stage's code (j or j + n)
        return lambda r: select(stage[r] >= n, stage[r] - n, stage[r]) if floats else stage[r]

    picks: list[Any] = []
    for t in range(count):
        prev = picks[-1] if picks else None

        def after(r: tuple, j: Any, x: Any, cond: Any, prev: Any = prev) -> Any:
            """``cond`` for element j (value ``x``) among those after the last pick."""
            if prev is None:
                return cond
            j_prev = intrin.min(intrin.max(prev(r), 0), n - 1)  # in the row, as _gather
            v_prev = at(r, j_prev)
            first, second = (v_prev, x) if ascend else (x, v_prev)
            later = logical_or(
                _less(first, second), logical_and(logical_not(_less(second, first)), j > j_prev)
            )
            return later if cond is None else logical_and(later, cond)

        def extremum(*r: Any, after: Any = after) -> Any:
            j = reduce_axis((0, n), name="j")
            x = at(r, j)
            keep = after(r, j, x, None)
            return reducer(key(x) if keep is None else select(keep, key(x), sentinel), axis=j)

        kind = "min" if ascend else "max"
        value = compute(rows, extremum, name=f"topk_round{t}_{kind}", tag=COMM_REDUCE_IDX)

        def first_holding(*r: Any, after: Any = after, value: Tensor = value) -> Any:
            j = reduce_axis((0, n), name="j")
            x = at(r, j)
            code = j
            if floats:  # NaN and +inf share the key +inf: NaNs first descending, last ascending
                code = j + select(isnan(x) if ascend else logical_not(isnan(x)), n, 0)
            return intrin.min(
                select(after(r, j, x, key(x) == value[r]), code, const(2 * n, "int32")), axis=j
            )

        stage = compute(rows, first_holding, name=f"topk_round{t}_index", tag=COMM_REDUCE_IDX)
        picks.append(decode(stage))
    return picks


def _positions(picks: list[Any], shape: tuple, ax: int, dtype: str, name: str) -> Tensor:
    """``index[..., i, ...]``: round i's pick, in ``dtype``."""
    out_shape = shape[:ax] + (len(picks),) + shape[ax + 1 :]

    def fcompute(*i: Any) -> Any:
        r = i[:ax] + i[ax + 1 :]
        out = picks[-1](r)
        for t in range(len(picks) - 2, -1, -1):
            out = select(i[ax] == t, picks[t](r), out)
        return out if dtype == "int32" else out.astype(dtype)

    return compute(out_shape, fcompute, name=name, tag=INJECTIVE)


def sort(data: Tensor, axis: Any = -1, is_ascend: Any = 1) -> Tensor:
    """``data`` sorted along ``axis`` (TVM's ``topi.sort``): ascending by default,
    descending with ``is_ascend=False``.

    Three ``te.compute`` stages (see the module): each element's rank (n^2 comparisons
    per row), the position of each rank, and a read of the values there, so the result
    holds ``data``'s elements bit for bit. NaN sorts above +inf (last ascending, first
    descending); equal values keep their index order.
    """
    what = "topi.sort"
    ax = _check_data(data, axis, what)
    ascend = _is_ascend(is_ascend, what)
    n = get_const_tuple(data.shape)[ax]
    rank = _rank(data, ax, ascend, "sort")
    index = _order(rank, ax, n, "int32", "sort_index")
    return _gather(data, index, ax, "sort_values")


def argsort(
    data: Tensor,
    valid_count: Tensor | None = None,
    axis: Any = -1,
    is_ascend: Any = 1,
    dtype: Any = "float32",
) -> Tensor:
    """The indices that sort ``data`` along ``axis`` (TVM's ``topi.argsort``), in
    ``dtype`` (TVM's default float32: exact for axes up to 2^24 elements).

    A stable sort: equal values keep their index order (``np.argsort(kind="stable")``);
    NaN sorts above +inf. Two ``te.compute`` stages: each element's rank (n^2
    comparisons per row) and the position of each rank (see the module).
    ``valid_count`` (TVM's sort of the first ``valid_count[b]`` boxes of each batch, for
    non-maximum suppression) is not provided.
    """
    what = "topi.argsort"
    if valid_count is not None:
        raise OutOfScopeError(
            f"{what}: valid_count is not provided by ansor_lab (TVM's argsort_nms, for "
            "non-maximum suppression). Sort the whole axis with valid_count=None; to keep "
            "the invalid entries last, first replace them with a value above the others "
            "(topi.where on a te.compute mask of the position against valid_count)"
        )
    ax = _check_data(data, axis, what)
    ascend = _is_ascend(is_ascend, what)
    n = get_const_tuple(data.shape)[ax]
    out_dtype = _index_dtype(dtype, n, what)
    rank = _rank(data, ax, ascend, "argsort")
    return _order(rank, ax, n, out_dtype, "argsort_index")


def topk(
    data: Tensor,
    k: Any = 1,
    axis: Any = -1,
    ret_type: str = "both",
    is_ascend: Any = False,
    dtype: Any = "int64",
) -> Tensor | list[Tensor]:
    """The ``k`` largest elements of ``data`` along ``axis`` (the ``k`` smallest with
    ``is_ascend=True``), in sorted order, and their indices (TVM's ``topi.topk``).

    ``k < 1`` takes the whole axis, as TVM; ``k`` must be a constant int. ``ret_type``:
    ``"both"`` returns ``[values, indices]``, ``"values"`` or ``"indices"`` one tensor;
    the indices are in ``dtype``. Equal values keep their index order, NaN counts as
    the largest value (see the module). The stages are ``argsort``'s, the positions
    computed for the first k ranks only, then a read of the values there; for k <= 8 on
    an axis of at least 4 k elements, k selection rounds of two reductions each take
    the positions instead (2 n comparisons a round, against the ranks' n^2), with the
    same results bit for bit.
    """
    what = "topi.topk"
    if ret_type not in _RET_TYPES:
        raise DSLError(f"{what}: ret_type {ret_type!r} is not one of {_RET_TYPES}")
    ax = _check_data(data, axis, what)
    ascend = _is_ascend(is_ascend, what)
    n = get_const_tuple(data.shape)[ax]
    if isinstance(k, Tensor):
        raise DSLError(
            f"{what}: k is the tensor {k.name!r}; ansor_lab needs a constant int k "
            "(static shapes): pass k as a Python int"
        )
    count = get_const_int(k)
    if count < 1:
        count = n
    if count > n:
        raise DSLError(
            f"{what}: k={count} is larger than axis {ax} of {n} elements; pass "
            f"1 <= k <= {n} (or k < 1 for the whole axis)"
        )
    out_dtype = _index_dtype(dtype, n, what)
    if _use_rounds(count, n):
        picks = _topk_rounds(data, ax, ascend, count)

        def order(dtype: str, name: str) -> Tensor:
            return _positions(picks, get_const_tuple(data.shape), ax, dtype, name)
    else:
        rank = _rank(data, ax, ascend, "topk")

        def order(dtype: str, name: str) -> Tensor:
            return _order(rank, ax, count, dtype, name)

    if ret_type == "indices":
        return order(out_dtype, "topk_indices")
    direct = out_dtype == "int32"  # the index stage is then the indices output itself
    index = order("int32", "topk_indices" if direct else "topk_index")
    values = _gather(data, index, ax, "topk_values")
    if ret_type == "values":
        return values
    if direct:
        return [values, index]
    indices = compute(
        index.shape, lambda *i: index[i].astype(out_dtype), name="topk_indices", tag=INJECTIVE
    )
    return [values, indices]


__all__ = ["argsort", "sort", "topk"]
