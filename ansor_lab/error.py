"""``tvm.error``: TVM's error classes under their names, mapped onto ours.

A face: ``except tvm.error.TVMError`` catches every error ansor_lab raises on purpose
(``AnsorLabError``); ``DiagnosticError`` is a TVMScript parse error (``ScriptError``);
``OpNotImplemented`` an out-of-scope name or operator (``OutOfScopeError``); ``OpError``
a malformed tensor expression (``DSLError``). ``register_error`` accepts a class and
returns it unchanged.
"""

from __future__ import annotations

from typing import Any

from .errors import (
    AnsorLabError as TVMError,
    DSLError as OpError,
    OutOfScopeError as OpNotImplemented,
    ScriptError as DiagnosticError,
)


class InternalError(TVMError):
    """An internal error of ansor_lab (a bug: please report it with the code that hit it)."""


class RPCError(TVMError, RuntimeError):
    """A remote measurement failed (ansor_lab measures in local worker processes)."""


class OpAttributeRequired(OpError, AttributeError):
    """A required attribute of an operator is missing."""


class OpAttributeInvalid(OpError, AttributeError):
    """An attribute of an operator has an invalid value."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An attribute of an operator is not supported."""


def register_error(func_name: Any = None, cls: Any = None) -> Any:
    """TVM's decorator registering an error class for the C++ runtime: returns it as is
    (there is no C++ runtime here to raise it)."""
    if isinstance(func_name, type):
        return func_name
    if cls is not None:
        return cls
    return lambda c: c


__all__ = [
    "DiagnosticError",
    "InternalError",
    "OpAttributeInvalid",
    "OpAttributeRequired",
    "OpAttributeUnImplemented",
    "OpError",
    "OpNotImplemented",
    "RPCError",
    "TVMError",
    "register_error",
]
