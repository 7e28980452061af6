"""Einstein summation (``topi.einsum``), TVM's semantics: one ``te.compute`` over one ``te.sum``.

``topi.einsum("ij,jk->ik", A, B)`` is ``te.compute((I, K), lambda i, k: te.sum(A[i, j] *
B[j, k], axis=j))``: the output's labels are its spatial axes, every other label one axis
of a single reduction, so the auto-scheduler tiles it as it tiles a matmul.

As TVM (and numpy): spaces are ignored; without ``->`` the output is the labels that occur
once, sorted (upper case first), after the ellipsis dimensions; a label repeated inside
one operand takes its diagonal (``"ii->i"``, the trace ``"ii"``); ``...`` stands for the
leading dimensions, broadcast across operands numpy-style. As TVM, a label of extent 1 in
one operand broadcasts against a larger extent of the same label elsewhere, and ellipsis
dimensions missing from an explicit output are summed (numpy refuses that equation).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..dsl import intrin
from ..dsl.tensor import Tensor, compute, reduce_axis
from ..errors import DSLError
from .utils import check_tensor, get_const_tuple

ELLIPSIS = "."  # sorts before every letter: the ellipsis dimensions come first, as in TVM
_OP = "topi.einsum"


def _parse_term(term: str, what: str, subscripts: str) -> list[str]:
    """The labels of one term, ``ELLIPSIS`` standing for ``...``."""
    labels: list[str] = []
    k = 0
    while k < len(term):
        c = term[k]
        if c == ".":
            if term[k : k + 3] != "...":
                raise DSLError(
                    f"{_OP}: subscripts {subscripts!r}: {what} has a '.' that is not part of "
                    "an ellipsis; write '...' (three dots) for the leading dimensions"
                )
            if ELLIPSIS in labels:
                raise DSLError(
                    f"{_OP}: subscripts {subscripts!r}: {what} has two ellipses; write '...' "
                    "at most once per term"
                )
            labels.append(ELLIPSIS)
            k += 3
            continue
        if not (c.isascii() and c.isalpha()):
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r}: {what} has the character {c!r}; labels "
                "are the letters a-z and A-Z, terms are separated by ',' and the output "
                "follows '->', e.g. 'ij,jk->ik'"
            )
        labels.append(c)
        k += 1
    return labels


def parse_subscripts(subscripts: Any, n_operands: int) -> tuple[list[list[str]], list[str]]:
    """(input labels per operand, output labels) of an einsum equation; the output of an
    implicit one (no ``->``) is the ellipsis, then the labels that occur once, sorted."""
    if not isinstance(subscripts, str):
        raise DSLError(
            f"{_OP}: subscripts must be a str such as 'ij,jk->ik', got "
            f"{type(subscripts).__name__} {subscripts!r}"
        )
    eq = "".join(subscripts.split())
    if eq.count("->") > 1:
        raise DSLError(
            f"{_OP}: subscripts {subscripts!r} have {eq.count('->')} arrows; write one "
            "'->' before the output, e.g. 'ij,jk->ik'"
        )
    lhs, arrow, rhs = eq.partition("->")
    for c in "->":
        if c in lhs or c in rhs:
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r} have a {c!r} outside '->'; the output "
                "follows the arrow '->', e.g. 'ij,jk->ik'"
            )
    terms = lhs.split(",")
    if len(terms) != n_operands:
        raise DSLError(
            f"{_OP}: subscripts {subscripts!r} name {len(terms)} operand(s) but "
            f"{n_operands} tensor(s) were given; write one comma-separated term per operand "
            f"(e.g. 'ij,jk->ik' for two), or pass {len(terms)} tensor(s)"
        )
    inputs = [_parse_term(t, f"operand {k}'s term {t!r}", subscripts) for k, t in enumerate(terms)]
    if not arrow:
        counts: dict[str, int] = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        output = [lab for lab in sorted(counts) if lab == ELLIPSIS or counts[lab] == 1]
        return inputs, output
    output = _parse_term(rhs, f"the output {rhs!r}", subscripts)
    seen = {lab for labels in inputs for lab in labels}
    for label in output:
        if output.count(label) > 1:
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r}: the output label {label!r} occurs "
                f"{output.count(label)} times; name each output dimension once (a "
                "diagonal is taken on the input side: 'ii->i')"
            )
        if label != ELLIPSIS and label not in seen:
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r}: the output label {label!r} is in no "
                f"input term; every output label must appear in an input, e.g. "
                f"'{','.join(''.join(lb).replace(ELLIPSIS, '...') for lb in inputs)}->"
                f"{''.join(lab for lab in output if lab in seen or lab == ELLIPSIS)}'"
            )
    return inputs, output


def _broadcast(a: int, b: int) -> int | None:
    """The common extent of two extents (equal, or one of them 1); None if they clash."""
    if a == b or b == 1:
        return a
    return b if a == 1 else None


def _shapes(
    inputs: list[list[str]], shapes: list[tuple[int, ...]], subscripts: str
) -> tuple[dict[str, int], tuple[int, ...], list[int]]:
    """(extent of each label, the broadcast ellipsis shape, ellipsis rank per operand)."""
    extents: dict[str, int] = {}
    where: dict[str, str] = {}
    ell_shape: tuple[int, ...] = ()
    ell_ranks = []
    for k, (labels, shape) in enumerate(zip(inputs, shapes)):
        term = "".join(labels).replace(ELLIPSIS, "...")
        named = len(labels) - (ELLIPSIS in labels)
        if (ELLIPSIS in labels and named > len(shape)) or (
            ELLIPSIS not in labels and named != len(shape)
        ):
            need = f"at least {named}" if ELLIPSIS in labels else str(named)
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r}: operand {k}'s term {term!r} has {need} "
                f"dimension(s) but operand {k} has shape {shape} ({len(shape)}-D); write one "
                "label per dimension, or '...' for the leading ones"
            )
        ell_rank = len(shape) - named
        ell_ranks.append(ell_rank if ELLIPSIS in labels else 0)
        pos = 0
        for label in labels:
            if label == ELLIPSIS:
                sub = shape[pos : pos + ell_rank]
                ell_shape = _broadcast_shapes(ell_shape, sub, k, subscripts)
                pos += ell_rank
                continue
            extent = shape[pos]
            here = f"operand {k} (axis {pos})"
            if label in extents:
                common = _broadcast(extents[label], extent)
                if common is None:
                    raise DSLError(
                        f"{_OP}: subscripts {subscripts!r}: label {label!r} has extent "
                        f"{extents[label]} in {where[label]} but {extent} in {here}; one label "
                        "names one dimension, so give those dimensions the same extent (or 1) "
                        "or use different labels"
                    )
                if common != extents[label]:
                    where[label] = here
                extents[label] = common
            else:
                extents[label], where[label] = extent, here
            pos += 1
    return extents, ell_shape, ell_ranks


def _broadcast_shapes(a: tuple, b: tuple, k: int, subscripts: str) -> tuple[int, ...]:
    """numpy's broadcast of two ellipsis shapes (aligned at their last dimension)."""
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    b = (1,) * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b):
        common = _broadcast(x, y)
        if common is None:
            raise DSLError(
                f"{_OP}: subscripts {subscripts!r}: the dimensions under '...' of operand {k} "
                f"{tuple(b)} do not broadcast with the other operands' {tuple(a)}; give them "
                "equal extents or 1 (numpy broadcasting)"
            )
        out.append(common)
    return tuple(out)


def einsum(subscripts: str, *operand: Tensor) -> Tensor:
    """Evaluates the Einstein summation convention on the operands (TVM's ``topi.einsum``).

    ``topi.einsum("ij,jk->ik", A, B)`` (TVM's documented form ``topi.einsum("ij,jk->ik",
    (A, B))``, one tuple of tensors, works too). Explicit (``"ij->ji"``) and implicit
    (``"ij,jk"``: the labels that occur once, sorted) outputs, diagonals (``"ii->i"``,
    ``"ii"``), any number of operands, and ``...`` with numpy broadcasting. The operands
    share one dtype, which is the output's. The result is ``T_einsum`` (tag ``einsum``):
    one ``te.compute`` whose body is the product of the operands, summed by one
    ``te.sum`` over every label not in the output (none: no reduction).
    """
    if len(operand) == 1 and isinstance(operand[0], (tuple, list)):
        operand = tuple(operand[0])
    if not operand:
        raise DSLError(f"{_OP} needs at least one tensor: topi.einsum('ij,jk->ik', A, B)")
    for k, t in enumerate(operand):
        check_tensor(t, f"{_OP}: operand {k}")
    dtype = operand[0].dtype
    for k, t in enumerate(operand):
        if t.dtype != dtype:
            raise DSLError(
                f"{_OP}: operand {k} ({t.name!r}) is {t.dtype} but operand 0 "
                f"({operand[0].name!r}) is {dtype}; the operands must share one dtype: "
                f"cast them first, e.g. topi.cast({t.name}, {dtype!r})"
            )
    if dtype == "bool":
        raise DSLError(
            f"{_OP} of bool tensors: cast them to an integer dtype first, "
            "e.g. topi.cast(x, 'int32')"
        )
    inputs, output = parse_subscripts(subscripts, len(operand))
    shapes = [get_const_tuple(t.shape) for t in operand]
    extents, ell_shape, ell_ranks = _shapes(inputs, shapes, subscripts)
    ell_names = [f"e{d}" for d in range(len(ell_shape))]
    out_names: list[str] = []
    out_shape: list[int] = []
    for label in output:
        if label == ELLIPSIS:
            out_names += ell_names
            out_shape += ell_shape
        else:
            out_names.append(label)
            out_shape.append(extents[label])
    summed = sorted({lab for labels in inputs for lab in labels} - set(output))
    red: dict[str, Any] = {}
    for label in summed:  # the ellipsis (if summed) first, then the letters, as TVM
        if label == ELLIPSIS:
            for name, extent in zip(ell_names, ell_shape):
                red[name] = reduce_axis((0, extent), name=name)
        else:
            red[label] = reduce_axis((0, extents[label]), name=label)

    def fcompute(*idx: Any) -> Any:
        var = dict(zip(out_names, idx))
        var.update({name: r.var for name, r in red.items()})
        body = None
        for t, labels, shape, ell_rank in zip(operand, inputs, shapes, ell_ranks):
            index = []
            for label in labels:
                if label == ELLIPSIS:
                    names = ell_names[len(ell_names) - ell_rank :]
                    wanted = ell_shape[len(ell_shape) - ell_rank :]
                else:
                    names, wanted = [label], [extents[label]]
                for name, full in zip(names, wanted):
                    # an extent-1 dimension broadcast against a larger one reads index 0
                    index.append(0 if shape[len(index)] == 1 and full != 1 else var[name])
            term = t[tuple(index)]
            body = term if body is None else body * term
        if not red:
            return body
        return intrin.sum(body, axis=list(red.values()))

    # name the output's loop variables after its labels: the schedule reads i, k / j
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in out_names]
    fcompute.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return compute(tuple(out_shape), fcompute, name="T_einsum", tag="einsum")


__all__ = ["einsum"]
