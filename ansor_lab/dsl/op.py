"""TVM's ``tvm.ir.Op``: an intrinsic, by name (the ``op`` of every ``Call`` node)."""

from __future__ import annotations

from ..errors import DSLError


class Op(str):
    """TVM's ``tvm.ir.Op``: an intrinsic, by name. A call's ``op`` is one: it compares as
    the name the package uses (``call.op == "exp"``) and gives TVM's full name as
    ``.name`` (``"tir.exp"``), as passes written for TVM read it."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """The registered name: ``tir.<op>`` for an intrinsic named without a namespace."""
        return str(self) if "." in self else f"tir.{self}"

    @staticmethod
    def get(op_name: str) -> Op:
        """``tvm.ir.Op.get("tir.exp")``."""
        if not isinstance(op_name, str) or not op_name:
            raise DSLError(f"Op.get(name): name must be a string like 'tir.exp', got {op_name!r}")
        return Op(op_name)

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is the same intrinsic (``Op.get("tir.exp")`` and ``exp``)."""
        return isinstance(other, str) and Op(other).name == self.name
