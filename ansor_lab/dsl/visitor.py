"""The one dispatch convention of every visitor over expressions and statements.

A visitor handles the node kind ``X`` (the node's class name) with a method
``expr_X`` when ``X`` is an expression and ``stmt_X`` when it is a statement. A kind it
handles without a method of its own is named in one of two class-level declarations:

* ``GENERIC_KINDS``: kinds handled by the visitor's generic path (a mutator rebuilding the
  node from its children, a checker with nothing to check on a leaf);
* ``REFUSED_KINDS``: kinds refused by design, each with the reason (the reference evaluator
  runs DAGs, so loop-IR nodes are refused).

Any other kind that reaches a visitor raises the visitor's ``error_class`` naming the
visitor and the node, and ``tests/ir/test_visitor_coverage.py`` checks every visitor
against every node class, so a new node kind fails loudly in one place. The convention
lives in ``dsl`` because the DSL's own visitors (printer, reference evaluator) use it and
``dsl`` imports nothing of ``ir``; ``ir.visitor`` re-exports it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from ..errors import DSLError

#: The two families of node kinds, which are also the method-name prefixes.
EXPR = "expr"
STMT = "stmt"
FAMILIES = (EXPR, STMT)

#: (visitor class, family, node class) -> the unbound handler, or None for a generic kind
_HANDLERS: dict[tuple[type, str, type], Callable | None] = {}


class Visitor:
    """Base of the visitors: finds ``expr_X`` / ``stmt_X`` handlers by node class name."""

    #: Node kinds (class names) this visitor handles by its generic path, without a method.
    GENERIC_KINDS: ClassVar[frozenset[str]] = frozenset()
    #: Node kinds this visitor refuses by design, mapped to the reason given in the error.
    REFUSED_KINDS: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: The exception raised for a node this visitor does not handle.
    error_class: ClassVar[type[Exception]] = DSLError

    def handler(self, family: str, node: object) -> Callable | None:
        """The bound ``<family>_<Kind>`` method for ``node``; None when its kind is generic.

        For a refused or unknown kind the returned callable raises ``error_class``, so
        callers treat every kind alike and the error names this visitor and the node.
        """
        key = (type(self), family, type(node))
        try:
            fn = _HANDLERS[key]
        except KeyError:
            fn = _HANDLERS[key] = _resolve(type(self), family, type(node))
        return None if fn is None else fn.__get__(self)


def _resolve(cls: type, family: str, node_cls: type) -> Callable | None:
    kind = node_cls.__name__
    method = getattr(cls, f"{family}_{kind}", None)
    if method is not None:
        return method
    if kind in getattr(cls, "GENERIC_KINDS", ()):
        return None
    reason = getattr(cls, "REFUSED_KINDS", {}).get(kind)
    error = getattr(cls, "error_class", DSLError)
    if reason is not None:
        message = f"{cls.__name__} refuses {family} node {kind}: {reason}"
    else:
        message = (
            f"{cls.__name__} has no handler for the {family} node {kind}: define "
            f"{cls.__name__}.{family}_{kind}, or name {kind!r} in its GENERIC_KINDS or "
            "REFUSED_KINDS"
        )

    def refuse(self: Any, node: object, *args: Any, **kwargs: Any) -> Any:
        # the message holds names only: printing the node could re-enter a printer
        raise error(message)

    return refuse


def unhandled_kinds(cls: type, family: str, kinds: Iterable[type]) -> list[str]:
    """The names of the node classes in ``kinds`` that ``cls`` neither handles nor declares.

    Works on any class following the convention, whether or not it derives from
    :class:`Visitor` (the declarations are read with defaults).
    """
    generic = getattr(cls, "GENERIC_KINDS", frozenset())
    refused = getattr(cls, "REFUSED_KINDS", {})
    return sorted(
        k.__name__
        for k in kinds
        if not hasattr(cls, f"{family}_{k.__name__}")
        and k.__name__ not in generic
        and k.__name__ not in refused
    )


def concrete_subclasses(base: type, package: str = "ansor_lab.") -> list[type]:
    """The leaf subclasses of ``base`` defined in ``package`` (the concrete node kinds).

    Only classes their module exports under their own name count: ``dataclass(slots=True)``
    replaces a class by a new one and the discarded original lingers as a subclass.
    """
    out: set[type] = set()
    stack = [c for c in base.__subclasses__() if _is_exported(c, package)]
    while stack:
        cls = stack.pop()
        subs = [c for c in cls.__subclasses__() if _is_exported(c, package)]
        if subs:
            stack.extend(subs)
        else:
            out.add(cls)
    return sorted(out, key=lambda c: c.__name__)


def _is_exported(cls: type, package: str) -> bool:
    module = sys.modules.get(cls.__module__)
    return cls.__module__.startswith(package) and getattr(module, cls.__qualname__, None) is cls
