"""Built functions of symbolic schedules: specialized, compiled and cached per shape.

``tvm.build(s, [A, B, C])`` over ``A = te.placeholder((n,))`` returns a
``SymbolicModule``. Called with arrays, it reads the shape variables from the arrays'
shapes (checking that dims sharing a variable agree), specializes the DAG, replays the
schedule's trace, compiles, and keeps the compiled module per tuple of variable values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dsl import expr as E
from ..errors import RuntimeArgumentError
from ..ir import nodes as N
from ..schedule.symbolic_schedule import SymbolicProgram
from .ndarray import as_numpy_view


class SymbolicIRModule(N.IRModule):
    """``tvm.lower`` of a symbolic schedule: the probe specialization, with a header
    saying which shape variables were given which probe values."""

    header: str = ""
    #: the text with the shape variables (``symbolic_print``), when it could be recovered
    symbolic: str | None = None

    def script(self) -> str:
        """The text with the shape variables, or the probe's under a note saying so."""
        if self.symbolic is not None:
            return self.symbolic
        return self.header + "\n" + super().script()

    def __repr__(self) -> str:
        return self.script()

    __str__ = __repr__


def lower_symbolic(program: SymbolicProgram, name: str) -> SymbolicIRModule:
    """The probe specialization's loop IR, printed with the shape variables
    (``schedule.symbolic_print``) or, where that text cannot be recovered, at the probe
    value ``dsl.symbolic.PROBE_VALUE`` under a note saying so."""
    binding = program.probe_binding()
    func = program.lower(binding, name)
    mod = SymbolicIRModule({func.name: func})
    mod.symbolic = program.symbolic_script(name)
    shown = ", ".join(f"{v.name} = {x}" for v, x in binding.items())
    mod.header = (
        f"# symbolic shapes ({', '.join(v.name for v in binding)}): printed at the probe "
        f"values {shown};\n# the built function specializes to its arguments' shapes"
    )
    return mod


class SymbolicModule:
    """A built symbolic schedule; call it with arrays of any shapes its variables allow."""

    type_key = "llvm"

    def __init__(
        self, program: SymbolicProgram, name: str, build: Callable[[N.PrimFunc], Any]
    ) -> None:
        self.program = program
        self.entry_name = name
        self._build = build
        self._cache: dict[tuple, Any] = {}
        self._last: Any = None
        self.shape_vars = program.shape_vars
        self._check_bindable()

    def _check_bindable(self) -> None:
        bound = {d for t in self.program.args for d in t.shape if isinstance(d, E.Var)}
        missing = [v.name for v in self.shape_vars if v not in bound]
        if missing:
            raise RuntimeArgumentError(
                f"shape variable(s) {', '.join(missing)} are not a dimension of any argument, "
                "so a call cannot know their values; pass a tensor with that dimension"
            )

    def bind(self, args: tuple) -> dict:
        """The shape variables' values read from ``args`` (checked against each other)."""
        params = self.program.args
        if len(args) != len(params):
            names = ", ".join(t.name for t in params)
            raise RuntimeArgumentError(
                f"{self.entry_name} takes {len(params)} arrays ({names}), got {len(args)}"
            )
        binding: dict = {}
        where: dict = {}
        for arr, t in zip(args, params):
            shape = as_numpy_view(arr).shape
            if len(shape) != len(t.shape):
                raise RuntimeArgumentError(
                    f"argument {t.name!r} has {len(shape)} dimensions {shape}, expected "
                    f"{len(t.shape)} ({_shape_text(t.shape)})"
                )
            for axis, (size, d) in enumerate(zip(shape, t.shape)):
                if not isinstance(d, E.Var):
                    continue
                if d in binding and binding[d] != size:
                    raise RuntimeArgumentError(
                        f"shape variable {d.name!r} is {binding[d]} from {where[d]} but {size} "
                        f"from argument {t.name!r} (dimension {axis}); arrays sharing "
                        f"{d.name!r} must agree"
                    )
                if d not in binding:
                    binding[d] = size
                    where[d] = f"argument {t.name!r} (dimension {axis})"
        return binding

    def specialized(self, args: tuple) -> Any:
        """The compiled module for these arrays' shapes (built on first use)."""
        binding = self.bind(args)
        key = tuple(binding[v] for v in self.shape_vars)
        mod = self._cache.get(key)
        if mod is None:
            for v, x in binding.items():
                if x <= 0:
                    raise RuntimeArgumentError(f"shape variable {v.name!r} is {x}: sizes are >= 1")
            mod = self._cache[key] = self._build(self.program.lower(binding, self.entry_name))
        self._last = mod
        return mod

    def __call__(self, *args: object) -> None:
        self.specialized(args)(*args)

    def emulate(self, *arrays: object, check: bool = True) -> None:
        """A CUDA build run on the GPU emulator, specialized to these arrays' shapes
        (``CUDAModule.emulate``); outputs are written in place."""
        mod = self.specialized(arrays)
        if not hasattr(mod, "emulate"):
            raise RuntimeArgumentError(
                "emulate runs a CUDA build on the GPU emulator; this function was built for "
                "the CPU: call it directly, f(a, b)"
            )
        mod.emulate(*arrays, check=check)

    def __getitem__(self, name: str) -> SymbolicModule:
        return self.get_function(name)

    def get_function(self, name: str) -> SymbolicModule:
        """The function ``name`` (the module holds one); ``"__tvm_main__"`` is it too."""
        if name not in (self.entry_name, "__tvm_main__"):
            raise RuntimeArgumentError(
                f"module has no function {name!r}; its function is {self.entry_name!r}"
            )
        return self

    def time_evaluator(self, func_name: str | None = None, dev: Any = None, **kwargs: Any):
        """As ``Module.time_evaluator``; each call times the module for its arrays' shapes."""
        if func_name is not None:
            self.get_function(func_name)

        def evaluate(*args: object):
            mod = self.specialized(args)
            return mod.time_evaluator(mod.entry_name, dev, **kwargs)(*args)

        return evaluate

    def get_source(self, fmt: str = "ll") -> str:
        """The source of the last specialization called (call the function first)."""
        if self._last is None:
            raise RuntimeArgumentError(
                "a symbolic function is compiled per shape on its first call: call it with "
                "arrays first, then get_source shows that specialization's code"
            )
        return self._last.get_source(fmt)

    @property
    def imported_modules(self) -> list:
        """The device modules (a CUDA build's source module), as TVM's host module has them.

        The last specialization called, else the probe's (every shape variable at
        ``dsl.symbolic.PROBE_VALUE``): a symbolic kernel is compiled per shape here, so its
        CUDA source is that of one specialization.
        """
        mod = self._last
        if mod is None:
            binding = self.program.probe_binding()
            key = tuple(binding[v] for v in self.shape_vars)
            mod = self._cache.get(key)
            if mod is None:
                mod = self._cache[key] = self._build(self.program.lower(binding, self.entry_name))
        return list(getattr(mod, "imported_modules", []))

    @property
    def specializations(self) -> list[tuple]:
        """The shape-variable values compiled so far."""
        return list(self._cache)

    def export_library(self, file_name: str, *args: Any, **kwargs: Any) -> None:
        """Not available: a symbolic function is compiled per shape at call time."""
        raise RuntimeArgumentError(
            "export_library of a function with symbolic shapes is not supported: it is "
            "compiled per shape when called; build it with static shapes (e.g. n = 1024) "
            "to export it"
        )

    save = export_library

    def __repr__(self) -> str:
        names = ", ".join(v.name for v in self.shape_vars)
        return f"SymbolicModule({self.entry_name}, shape variables: {names})"


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
