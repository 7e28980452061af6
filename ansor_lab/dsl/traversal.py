"""Generic traversal of expression trees: children, post-order, map, substitute, free vars.

Works on every node class of ``dsl.expr`` (and the IR's expression nodes) through their
dataclass fields, so a new node kind is traversed without editing this module.
"""

from __future__ import annotations

from .expr import PrimExpr, Var, _fields, node_fields

#: Field names that may hold sub-expressions (others hold names, dtypes, tensors...).
_CHILD_NAMES = frozenset(
    {
        "a",
        "b",
        "value",
        "condition",
        "true_value",
        "false_value",
        "args",
        "indices",
        "source",
        "base",
        "stride",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f for f in _fields(cls) if f in _CHILD_NAMES)
        _CHILD_FIELDS[cls] = names
    return names


def children(e: PrimExpr) -> list[PrimExpr]:
    """The direct sub-expressions of ``e``, in field order."""
    out = []
    for f in _child_fields(type(e)):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(item for item in v if isinstance(item, PrimExpr))
    return out


def _collect(e: PrimExpr, out: list) -> None:
    for f in _child_fields(type(e)):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            _collect(v, out)
        elif isinstance(v, tuple):
            for item in v:
                if isinstance(item, PrimExpr):
                    _collect(item, out)
    out.append(e)


def post_order(e: PrimExpr) -> list[PrimExpr]:
    """Every sub-expression of ``e`` (``e`` last), children before parents."""
    out: list[PrimExpr] = []
    _collect(e, out)
    return out


def map_children(e: PrimExpr, fn) -> PrimExpr:
    """Rebuild ``e`` with ``fn`` applied to each direct sub-expression (same node if unchanged)."""
    # the hottest function of lowering and of the search: positional fields (every field
    # of a node is an init field, in declaration order), no dict, no rebuild when unchanged
    values = None
    for k, f in enumerate(node_fields(e)):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            nv = fn(v)
        elif isinstance(v, tuple) and v and any(isinstance(item, PrimExpr) for item in v):
            nv = tuple(fn(item) if isinstance(item, PrimExpr) else item for item in v)
            if all(p is q for p, q in zip(nv, v)):
                continue
        else:
            continue
        if nv is not v:
            if values is None:
                values = [getattr(e, name) for name in node_fields(e)]
            values[k] = nv
    return e if values is None else type(e)(*values)


def substitute(e: PrimExpr, mapping: dict) -> PrimExpr:
    """Replace variables in ``e`` by expressions (keys are Var objects)."""
    if not mapping:
        return e
    memo: dict[int, PrimExpr] = {}

    def visit(node: PrimExpr) -> PrimExpr:
        if isinstance(node, Var):
            return mapping.get(node, node)
        key = id(node)
        hit = memo.get(key)
        if hit is not None:
            return hit
        out = map_children(node, visit)
        memo[key] = out
        return out

    return visit(e)


def free_vars(e: PrimExpr) -> set:
    """The set of Var objects appearing in ``e``."""
    return {n for n in post_order(e) if isinstance(n, Var)}
