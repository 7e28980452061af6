"""Walking a lowered loop nest store by store, with the loops around each store.

The feature extractor and the analytic prior both read each store statement together with
the loops that enclose it (extent, kind and the auto-unroll budget in force); this walker
keeps that stack so each of them only says what to do with a store.
"""

from __future__ import annotations

from ..codegen.horizontal_reduce import HORIZONTAL
from ..dsl import expr as E
from ..ir import nodes as N

#: Extent assumed for a loop whose extent is not a constant.
UNKNOWN_EXTENT = 16


class LoopInfo:
    """One enclosing loop: variable, extent, kind and the auto-unroll budget around it;
    ``horizontal``: the schedule lets the code generator combine its partial results as
    a tree (``codegen.horizontal_reduce``)."""

    __slots__ = ("var", "extent", "kind", "unroll_budget", "horizontal")

    def __init__(
        self, var: E.Var, extent: int, kind: str, unroll_budget: int, horizontal: bool = False
    ) -> None:
        self.var = var
        self.extent = extent
        self.kind = kind
        self.unroll_budget = unroll_budget
        self.horizontal = horizontal


class LoopNestWalker:
    """Visits a statement tree and calls ``store`` for every BufferStore.

    While ``store`` runs, ``loops`` holds the enclosing loops (outermost first), ``guards``
    the number of enclosing conditionals and ``local_sizes`` the bytes of the buffers
    allocated so far. A ``pragma_auto_unroll_max_step`` annotation applies to the loops
    inside the annotated one, as the auto-unroll pass reads it.
    """

    def __init__(self) -> None:
        self.loops: list[LoopInfo] = []
        self.guards = 0
        self.local_sizes: dict = {}

    def visit(self, s: N.Stmt) -> None:
        """Walk ``s``."""
        if isinstance(s, N.SeqStmt):
            for x in s.seq:
                self.visit(x)
        elif isinstance(s, N.For):
            extent = s.extent.value if isinstance(s.extent, E.IntImm) else UNKNOWN_EXTENT
            budget = s.annotation("pragma_auto_unroll_max_step")
            outer = self.loops[-1].unroll_budget if self.loops else 0
            self.loops.append(
                LoopInfo(
                    s.loop_var,
                    extent,
                    s.kind,
                    int(budget) if budget is not None else outer,
                    bool(s.annotation(HORIZONTAL)),
                )
            )
            self.visit(s.body)
            self.loops.pop()
        elif isinstance(s, N.IfThenElse):
            self.guards += 1
            self.visit(s.then_case)
            if s.else_case is not None:
                self.visit(s.else_case)
            self.guards -= 1
        elif isinstance(s, N.Allocate):
            self.local_sizes[s.buffer] = s.buffer.nbytes
            self.visit(s.body)
        elif isinstance(s, (N.LetStmt, N.Block)):
            self.visit(s.body)
        elif isinstance(s, N.BufferStore):
            self.store(s)

    def store(self, s: N.BufferStore) -> None:
        """Handle one store (``self.loops`` are the loops around it)."""
        raise NotImplementedError
