"""The buffer accesses of a parsed statement, in the variables of its loops.

Lets (a block's ``vi = T.axis.spatial(8, i)``, a script's ``x = i * 2``) are substituted,
so an access reads in terms of loop variables; each access keeps the loops inside the
statement that enclose it and the conditions it runs under. ``script.deps`` compares them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..ir import nodes as N
from ..ir.visitor import stmt_exprs, stmt_fields


@dataclass(frozen=True)
class Loop:
    """A loop inside the checked statement: its variable and (substituted) range."""

    var: E.Var
    min: E.PrimExpr
    extent: E.PrimExpr


@dataclass(frozen=True)
class Access:
    """One load or store of ``buffer`` at ``indices``."""

    buffer: N.Buffer
    indices: tuple
    write: bool
    loops: tuple = ()  # the enclosing Loops inside the checked statement, outermost first
    guards: tuple = ()  # conditions that hold where it runs
    #: a write as written: (indices, value, the variables bound inside the statement)
    stored: tuple | None = None

    def text(self) -> str:
        """``B[i + 1]``: how the access reads in the message of a refusal."""
        return f"{self.buffer.name}[{', '.join(str(x) for x in self.indices)}]"


def collect(stmt: N.Stmt, *, keep_local: bool = False) -> list[Access]:
    """Every access under ``stmt``; without ``keep_local``, none to buffers allocated inside
    it (each run of ``stmt`` has its own copy of those)."""
    out: list[Access] = []
    local: list[N.Buffer] = []
    _Collector(out, local).stmt(stmt, {}, (), ())
    if keep_local:
        return out
    return [a for a in out if not any(a.buffer is b for b in local)]


@dataclass
class _Collector:
    out: list
    local: list

    def exprs(self, exprs: tuple, env: dict, loops: tuple, guards: tuple) -> None:
        for e in exprs:
            for node in E.post_order(E.substitute(e, env)):
                if isinstance(node, N.BufferLoad):
                    self.out.append(Access(node.buffer, node.indices, False, loops, guards))

    def stmt(self, s: N.Stmt, env: dict, loops: tuple, guards: tuple) -> None:
        if isinstance(s, N.For):
            lo, extent = E.substitute(s.min, env), E.substitute(s.extent, env)
            self.stmt(s.body, env, (*loops, Loop(s.loop_var, lo, extent)), guards)
        elif isinstance(s, N.LetStmt):
            self.exprs((s.value,), env, loops, guards)
            self.stmt(s.body, {**env, s.var: E.substitute(s.value, env)}, loops, guards)
        elif isinstance(s, N.BufferStore):
            self.exprs((s.value, *s.indices), env, loops, guards)
            indices = tuple(E.substitute(x, env) for x in s.indices)
            bound = frozenset(env) | {lp.var for lp in loops}
            stored = (s.indices, s.value, bound)
            self.out.append(Access(s.buffer, indices, True, loops, guards, stored))
        elif isinstance(s, N.IfThenElse):
            cond = E.substitute(s.condition, env)
            self.exprs((cond,), {}, loops, guards)
            self.stmt(s.then_case, env, loops, (*guards, cond))
            if s.else_case is not None:
                self.stmt(s.else_case, env, loops, (*guards, E.Not(cond)))
        else:
            if isinstance(s, N.Allocate):
                self.local.append(s.buffer)
            self.exprs(tuple(stmt_exprs(s)), env, loops, guards)
            for name in stmt_fields(s):
                value = getattr(s, name)
                for child in value if isinstance(value, tuple) else (value,):
                    if isinstance(child, N.Stmt):
                        self.stmt(child, env, loops, guards)
