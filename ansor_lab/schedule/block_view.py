"""A schedule's module shows TensorIR blocks while its body stays the optimized lowering.

``sch.mod["main"]`` is the lowered loop program (``lower.py``): ``tvm.build``, the
features and the tuner use it exactly as before. Its ``source`` is a ``ScheduledSource``:
what the function was created from (every attribute of the original source reads
through), plus the State, from which ``block_view(func)`` builds, once and only when
asked, the block form TVM's schedule module has (``block_emit``). Printing the function
prints that form, and ``tvm.ir.structural_equal`` compares it; ``tvm.lower(sch.mod)``
drops it (the loop form). A state the block form cannot show prints its loop form under
a comment saying why.
"""

from __future__ import annotations

from typing import Any

from ..ir import nodes as N, printer
from .block_emit import BlockFormUnavailable, block_form_func


class ScheduledSource:
    """``PrimFunc.source`` of a schedule's module: the original source and the State."""

    def __init__(self, inner: Any, state: Any, args: list, body: N.Stmt) -> None:
        self._inner = inner
        self._state = state
        self._args = list(args)
        self._body = body  # the lowered body this source describes (renames keep it)
        self._cache: dict = {}

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes not set above: they are the original source's
        inner = self.__dict__.get("_inner")
        if name.startswith("__") or inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_cache"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._cache = {}

    @property
    def inner(self) -> Any:
        """What the scheduled function was created from (``te.create_prim_func``'s source)."""
        return self._inner

    def block_result(self, func: N.PrimFunc) -> N.PrimFunc | str | None:
        """The block form of ``func`` (a PrimFunc), the reason there is none (a str), or
        None when ``func`` is not the function this source describes."""
        if func.body is not self._body:
            return None
        key = (func.name, func.attrs)
        if key not in self._cache:
            try:
                self._cache[key] = block_form_func(self._state, self._args, func.name, func.attrs)
            except BlockFormUnavailable as why:
                self._cache[key] = str(why)
        return self._cache[key]

    def block_view(self, func: N.PrimFunc) -> N.PrimFunc | None:
        """The block form of ``func`` (what it prints and compares as), or None."""
        out = self.block_result(func)
        return out if isinstance(out, N.PrimFunc) else None


def scheduled_func(func: N.PrimFunc, inner: Any, state: Any, args: list) -> N.PrimFunc:
    """``func`` (a schedule's lowering) showing the block form of ``state``."""
    source = ScheduledSource(inner, state, args, func.body)
    return N.PrimFunc(func.params, func.body, func.name, func.attrs, source)


def without_block_view(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` printing as the loop program it is (``tvm.lower``)."""
    if isinstance(func.source, ScheduledSource):
        return N.PrimFunc(func.params, func.body, func.name, func.attrs, func.source.inner)
    return func


def _script(func: N.PrimFunc) -> str | None:
    src = func.source
    written = getattr(src, "written", None)
    symbolic = getattr(src, "symbolic_args", None)  # printed by block_script (the probe)
    if written is not None and not symbolic and getattr(src, "body", None) is func.body:
        return printer.loop_form(src.block_view(func))  # parsed: as written
    if not isinstance(src, ScheduledSource):
        return None
    out = src.block_result(func)
    if isinstance(out, N.PrimFunc):
        return printer.loop_form(out)
    if isinstance(out, str):
        why = out.replace("\n", " ")
        return f"# no block form ({why}): the lowered loop form\n" + printer.loop_form(func)
    return None


# before block_script's: a parsed function prints as written, not as recomputed
printer.SCRIPT_HOOKS.insert(0, _script)


def lowered_script(mod: N.IRModule | N.PrimFunc) -> str:
    """The loop form of what a schedule's module builds (the text ``tvm.lower`` prints)."""
    func = mod.main_function() if isinstance(mod, N.IRModule) else mod
    return printer.loop_form(func)
