"""Linear forms of integer expressions: ``sum(coeff * term) + const``, and back.

``linear_form`` reads ``+ - *`` by constants (and recombines ``(a // c) * c + a % c``
into ``a``); ``from_linear`` rebuilds the expression with the largest coefficients first,
so tiled indices read as ``i_0 * 64 + i_1 * 16 + j``. The simplifier canonicalises
integer sums through them; the code generator reads access strides from them.
"""

from __future__ import annotations

from ..dsl import dtypes, expr as E
from ..dsl.printer import text


def _is_index(e: E.PrimExpr) -> bool:
    # a vector of indices (int32x8: tir.Ramp built by hand) is left as it is
    return dtypes.is_int(e.dtype) and "x" not in e.dtype


def linear_form(e: E.PrimExpr) -> tuple[dict, int] | None:
    """``e`` as ({term: coeff}, const) when it is an integer expression, else None."""
    if not _is_index(e):
        return None
    terms: dict = {}
    const = 0

    def add(node: E.PrimExpr, scale: int) -> None:
        nonlocal const
        if isinstance(node, E.IntImm):
            const += scale * node.value
        elif isinstance(node, E.Add):
            add(node.a, scale)
            add(node.b, scale)
        elif isinstance(node, E.Sub):
            add(node.a, scale)
            add(node.b, -scale)
        elif isinstance(node, E.Mul) and isinstance(node.b, E.IntImm):
            add(node.a, scale * node.b.value)
        elif isinstance(node, E.Mul) and isinstance(node.a, E.IntImm):
            add(node.b, scale * node.a.value)
        else:
            terms[node] = terms.get(node, 0) + scale

    add(e, 1)
    # (a // c) * c + a % c is a, for floor and for truncated division alike: a fused axis
    # split again (a 7x7 pooling window read as one run of 49, then split into vector
    # lanes) indexes row a // 7, column a % 7, which is the flat offset a. Without this
    # the lanes' offsets look unrelated and a contiguous read becomes a gather.
    for node in [t for t in terms if type(t) in _DIV_OF_MOD]:
        div = _DIV_OF_MOD[type(node)](node.a, node.b, node.dtype)
        scale = terms.get(node, 0)
        if (
            scale
            and isinstance(node.b, E.IntImm)
            and node.b.value > 0
            and div in terms
            and terms[div] % node.b.value == 0
            and terms[div] // node.b.value == scale
        ):
            del terms[node], terms[div]
            add(node.a, scale)
    return {t: c for t, c in terms.items() if c != 0}, const


_DIV_OF_MOD = {E.FloorMod: E.FloorDiv, E.Mod: E.Div}


def _term_key(item: tuple) -> tuple:
    term, coeff = item

    return (-abs(coeff), text(term))


def _wrap(value: int, dtype: str) -> int:
    """``value`` modulo 2**bits, in the signed range of ``dtype`` (two's complement)."""
    lo, hi = dtypes.int_range(dtype)
    return (value - lo) % (hi - lo + 1) + lo


def from_linear(terms: dict, const: int, dtype: str) -> E.PrimExpr:
    """Rebuild an expression from a linear form, largest coefficients first.

    Coefficients and the constant are reduced modulo 2**bits: integer ``+ - *`` wrap, so
    this changes no value, and every constant stays representable in ``dtype``.
    """
    lo, _ = dtypes.int_range(dtype)
    terms = {t: _wrap(k, dtype) for t, k in terms.items()}
    terms = {t: k for t, k in terms.items() if k != 0}
    const = _wrap(const, dtype)
    out: E.PrimExpr | None = None
    for term, coeff in sorted(terms.items(), key=_term_key):
        if out is None or coeff == lo:  # -lo is not representable: multiply, then add
            piece = term if coeff == 1 else E.Mul(term, E.IntImm(coeff, dtype), dtype)
            out = piece if out is None else E.Add(out, piece, dtype)
            continue
        piece = term if abs(coeff) == 1 else E.Mul(term, E.IntImm(abs(coeff), dtype), dtype)
        out = E.Add(out, piece, dtype) if coeff > 0 else E.Sub(out, piece, dtype)
    if out is None:
        return E.IntImm(const, dtype)
    if const > 0 or const == lo:
        return E.Add(out, E.IntImm(const, dtype), dtype)
    if const < 0:
        return E.Sub(out, E.IntImm(-const, dtype), dtype)
    return out
