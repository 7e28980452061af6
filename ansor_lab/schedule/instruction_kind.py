"""Instruction kinds: each schedule primitive declared once, beside its method.

``@instruction("Split", inputs=("loop", "factors"), outputs="list")`` above a method of
``tir.Schedule`` declares the instruction kind that method records: its name in traces,
the names under which its arguments are stored (inputs may hold handles, attributes are
plain data), whether it draws a decision, whether it leaves the state alone, and how it
prints. The trace's table of kinds, its Python printer and its replay are derived from
these declarations, so a new primitive is one decorator and one method.

Replay never relies on a method's Python keyword names: a stored argument is looked up in
the declaration, which names the keyword it is passed as (``keywords=`` when the two
differ), and the decorator checks at import time that every such keyword exists. Renaming
a keyword is one change to one declaration; logs written before keep replaying.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScheduleError
from .ignored import warn_ignored

#: how an instruction's outputs are written in the Python rendering
OUTPUT_FORMS = ("none", "one", "list")


@dataclass(frozen=True)
class InstructionKind:
    """The declaration of one instruction kind (see the module docstring)."""

    name: str  # the kind as traces store it ("Split")
    method: str  # the tir.Schedule method that applies it ("split")
    inputs: tuple[str, ...] = ()  # stored names of arguments that may hold handles
    attrs: tuple[str, ...] = ()  # stored names of plain-data arguments
    varargs: str | None = None  # the input passed as *args (Fuse's and Reorder's loops)
    sampling: bool = False  # draws a decision, stored with it and passed back on replay
    pure: bool = False  # reads the state without changing it
    outputs: str = "none"  # "none", "one" handle, or a "list" of handles
    keywords: Mapping[str, str] = field(default_factory=dict)  # stored name -> keyword
    printers: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    #: stored names the method has no default for (a trace must give them)
    required: tuple[str, ...] = ()
    # derived: stored name -> keyword for every argument (replay reads it per instruction)
    _keyword_of: dict = field(init=False, repr=False, compare=False)
    #: derived: every stored argument name, as a set (a cheap check per recorded step)
    param_names: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kws = {name: self.keywords.get(name, name) for name in self.inputs + self.attrs}
        object.__setattr__(self, "_keyword_of", kws)
        object.__setattr__(self, "param_names", frozenset(kws))

    @property
    def params(self) -> tuple[str, ...]:
        """Every stored argument name, inputs first."""
        return self.inputs + self.attrs

    def keyword(self, name: str) -> str:
        """The method keyword a stored argument is passed as."""
        return self.keywords.get(name, name)

    def check_args(self, names: Any) -> None:
        """Raise ScheduleError naming the first stored argument this kind does not take."""
        known = self._keyword_of
        for name in names:
            if name not in known:
                raise ScheduleError(
                    f"instruction {self.name}: unknown argument {name!r}; {self.name} takes "
                    f"{', '.join(self.params) or 'no arguments'} (was the trace written by "
                    "another version of ansor_lab?)"
                )

    def call(self, sch: Any, args: list, decision: Any = None) -> Any:
        """Apply this kind to ``sch`` with stored ``(name, value)`` arguments (handles
        already resolved) and, for a sampling kind, ``decision``."""
        positional: list = []
        kwargs: dict = {}
        keyword_of = self._keyword_of
        for name, value in args:
            if name == self.varargs:
                positional = list(value)
            elif name in keyword_of:
                kwargs[keyword_of[name]] = value
            else:
                self.check_args([name])
        if self.sampling:
            kwargs[self.keyword("decision")] = decision
        return getattr(sch, self.method)(*positional, **kwargs)


class _Registry(Mapping):
    """Kind name -> InstructionKind, filled by the ``@instruction`` decorators.

    The declarations live in ``tir_schedule``, which imports the trace module; reading
    the registry imports ``tir_schedule`` once, so a trace read before any schedule was
    made still knows every kind.
    """

    def __init__(self) -> None:
        self._kinds: dict[str, InstructionKind] = {}
        self._loaded = False

    def _load(self) -> dict[str, InstructionKind]:
        if not self._loaded:
            self._loaded = True
            from . import tir_schedule  # noqa: F401, PLC0415 - the import cycle is why it is lazy

        return self._kinds

    def __getitem__(self, kind: str) -> InstructionKind:
        return self._load()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, kind: object) -> bool:
        return kind in self._load()

    @property
    def declared(self) -> dict[str, InstructionKind]:
        """The declarations registered so far, without importing the schedule module."""
        return self._kinds

    def add(self, decl: InstructionKind) -> None:
        """Register a declaration; a second kind of the same name is a bug."""
        if decl.name in self._kinds:
            raise ValueError(f"instruction kind {decl.name!r} is declared twice")
        self._kinds[decl.name] = decl


#: every instruction kind, by name (derived from the declarations)
REGISTRY = _Registry()


def instruction_kind(kind: str) -> InstructionKind:
    """The declaration of ``kind``; ScheduleError for a kind no primitive declares."""
    try:
        return REGISTRY[kind]
    except KeyError:
        raise ScheduleError(
            f"unknown instruction kind {kind!r}; known kinds: {', '.join(REGISTRY)}"
        ) from None


def instruction(
    name: str,
    *,
    inputs: tuple[str, ...] = (),
    attrs: tuple[str, ...] = (),
    varargs: str | None = None,
    sampling: bool = False,
    pure: bool = False,
    outputs: str = "none",
    keywords: Mapping[str, str] | None = None,
    printers: Mapping[str, Callable[[Any], str]] | None = None,
    ignored: Mapping[str, Any] | None = None,
) -> Callable[[Callable], Callable]:
    """Declare the instruction kind the decorated schedule method records.

    The declaration is registered and attached as ``method.instruction``. Every stored
    name must be a parameter of the method (under its keyword), so renaming a keyword
    without updating the declaration fails here. ``ignored`` names TVM keywords the
    method accepts and ignores, with TVM's default: any other value warns once
    (``IgnoredArgumentWarning``); only methods with such keywords are wrapped.
    """
    if outputs not in OUTPUT_FORMS:
        raise ValueError(f"{name}: outputs must be one of {OUTPUT_FORMS}, got {outputs!r}")

    def register(fn: Callable) -> Callable:
        decl = InstructionKind(
            name,
            fn.__name__,
            tuple(inputs),
            tuple(attrs),
            varargs,
            sampling,
            pure,
            outputs,
            dict(keywords or {}),
            dict(printers or {}),
        )
        params = inspect.signature(fn).parameters
        names = list(decl.params) + (["decision"] if sampling else [])
        for stored in names:
            kw = decl.keyword(stored)
            param = params.get(kw)
            wanted = inspect.Parameter.VAR_POSITIONAL if stored == varargs else None
            if param is None or (wanted is not None and param.kind != wanted):
                raise TypeError(
                    f"@instruction({name!r}): {fn.__qualname__} has no "
                    f"{'*' if wanted else ''}parameter {kw!r} for stored argument {stored!r}"
                )
        required = tuple(
            stored
            for stored in decl.params
            if stored != varargs and params[decl.keyword(stored)].default is inspect.Parameter.empty
        )
        decl = dataclasses.replace(decl, required=required)
        if varargs is not None and varargs not in decl.inputs:
            raise TypeError(f"@instruction({name!r}): varargs {varargs!r} is not an input")
        for kw in ignored or {}:
            if kw not in params:
                raise TypeError(f"@instruction({name!r}): no parameter {kw!r} to ignore")
        REGISTRY.add(decl)
        method = _warning_ignored(fn, dict(ignored), params) if ignored else fn
        method.instruction = decl
        return method

    return register


def _warning_ignored(fn: Callable, ignored: dict[str, Any], params: Mapping) -> Callable:
    """``fn``, warning once per keyword when an ignored keyword is not TVM's default."""
    names = list(params)
    # where a keyword may also come positionally (self included, as in the call); a
    # keyword after *args (fuse's preserve_unit_iters) only comes by name
    position = {
        kw: names.index(kw) if params[kw].kind == params[kw].POSITIONAL_OR_KEYWORD else 1 << 30
        for kw in ignored
    }
    api = f"tir.Schedule.{fn.__name__}"

    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Any:
        for kw, default in ignored.items():
            if kw in kwargs:
                value = kwargs[kw]
            elif len(args) > position[kw]:
                value = args[position[kw]]
            else:
                continue
            if value != default:
                warn_ignored(api, kw, value, default)
        return fn(*args, **kwargs)

    return method
