"""``tvm.ir.structural_equal``: equality of IR up to the names of variables and buffers.

Two functions are structurally equal when one can be turned into the other by renaming
its variables and buffers consistently (a bijection found while walking both in step), as
TVM's ``structural_equal`` does with ``map_free_vars`` for parameters.
``assert_structural_equal`` raises with the path to the first difference.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from ..dsl import expr as E
from ..errors import IRError
from . import nodes as N


class StructuralDifference(IRError, AssertionError):
    """Two IR values differ; the message names the first place (a path) and both sides."""


class _Matcher:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.fwd: dict = {}
        self.back: dict = {}

    def _bind(self, a: object, b: object, path: str) -> None:
        if a in self.fwd or b in self.back:
            if self.fwd.get(a) is not b:
                raise StructuralDifference(
                    f"{path}: {_name(a)} and {_name(b)} are bound differently"
                )
            return
        self.fwd[a] = b
        self.back[b] = a

    def buffer(self, a: N.Buffer, b: N.Buffer, path: str) -> None:
        if a is b:
            return
        for attr in ("shape", "dtype", "scope", "padded_strides"):
            if getattr(a, attr) != getattr(b, attr):
                raise StructuralDifference(
                    f"{path}: buffer {a.name!r} has {attr} {getattr(a, attr)!r}, "
                    f"{b.name!r} has {getattr(b, attr)!r}"
                )
        self._bind(a, b, path)

    def var(self, a: E.Var, b: E.Var, path: str) -> None:
        if a is b:
            return
        if a.dtype != b.dtype:
            raise StructuralDifference(f"{path}: {a.name}: {a.dtype} vs {b.name}: {b.dtype}")
        if self._defining:  # a loop or let (re)defines it: sibling loops may reuse a Var
            old = self.fwd.pop(a, None)
            self.back.pop(old, None)
            self.fwd.pop(self.back.pop(b, None), None)
        elif a not in self.fwd and not self.map_free_vars:
            raise StructuralDifference(f"{path}: free variables {a.name} and {b.name} differ")
        self._bind(a, b, path)

    _defining = False

    def value(self, a: object, b: object, path: str) -> None:
        if a is b:
            return
        if isinstance(a, N.Buffer) and isinstance(b, N.Buffer):
            return self.buffer(a, b, path)
        if isinstance(a, E.Var) and isinstance(b, E.Var) and type(a) is type(b):
            return self.var(a, b, path)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            # plain numbers (shape dims are an int subclass): equal by value, NaN to NaN
            if a != b and not (a != a and b != b):
                raise StructuralDifference(f"{path}: {a!r} vs {b!r}")
            return None
        if type(a) is not type(b):
            raise StructuralDifference(f"{path}: {_show(a)} vs {_show(b)}")
        if isinstance(a, (tuple, list)):
            if len(a) != len(b):
                raise StructuralDifference(f"{path}: {len(a)} items vs {len(b)}")
            for k, (x, y) in enumerate(zip(a, b)):
                self.value(x, y, f"{path}[{k}]")
            return None
        if is_dataclass(a):
            binds = isinstance(a, (N.For, N.LetStmt))
            for f in fields(a):
                if f.name in ("source",) or not f.compare:
                    continue
                if binds and f.name in ("loop_var", "var"):
                    self._defining = True
                    try:
                        self.value(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
                    finally:
                        self._defining = False
                    continue
                self.value(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
            return None
        if a != b and not (a != a and b != b):  # NaN constants are equal to each other
            raise StructuralDifference(f"{path}: {a!r} vs {b!r}")
        return None


def _name(x: object) -> str:
    return getattr(x, "name", repr(x))


def _show(x: object) -> str:
    text = repr(x).replace("\n", " ")
    return f"{type(x).__name__} {text[:80]}"


def _view(x: object) -> object:
    """A function that has a block form (a schedule's module) compares as that form."""
    if isinstance(x, N.PrimFunc):
        make = getattr(x.source, "block_view", None)
        view = make(x) if callable(make) else None
        if view is not None:
            return view
    return x


def _functions(x: object) -> object:
    if isinstance(x, N.IRModule):
        return tuple(sorted((k, _view(f)) for k, f in x.functions.items()))
    return _view(x)


def _compare(lhs: object, rhs: object, map_free_vars: bool) -> None:
    m = _Matcher(map_free_vars)
    lhs, rhs = _functions(lhs), _functions(rhs)
    if isinstance(lhs, N.PrimFunc) and isinstance(rhs, N.PrimFunc):
        if len(lhs.params) != len(rhs.params):
            raise StructuralDifference(f"params: {len(lhs.params)} parameters vs {len(rhs.params)}")
        for k, (a, b) in enumerate(zip(lhs.params, rhs.params)):
            m.buffer(a, b, f"params[{k}]")
        if lhs.attrs != rhs.attrs:
            raise StructuralDifference(f"attrs: {dict(lhs.attrs)} vs {dict(rhs.attrs)}")
        m.value(lhs.body, rhs.body, "body")
        return
    m.value(lhs, rhs, "root")


def structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` are equal up to consistent renaming (PrimFuncs,
    IRModules, statements or expressions)."""
    try:
        _compare(lhs, rhs, map_free_vars)
    except StructuralDifference:
        return False
    return True


def assert_structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> None:
    """Raise StructuralDifference naming the first difference, as TVM's does (a ValueError)."""
    _compare(lhs, rhs, map_free_vars)
