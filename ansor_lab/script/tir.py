"""``from ansor_lab.script import tir as T``: the TVMScript names used in decorated functions.

The body of a ``@T.prim_func`` function is never executed: its source is parsed (see
``script.parser``). The names here are what Python itself evaluates when it defines the
function: the decorator, and the parameter annotations ``T.Buffer(...)``, ``T.handle``,
``T.int32``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ScriptError

__all__ = ["Buffer", "handle", "prim_func"]

_DTYPES = (
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool",
)  # fmt: skip


def prim_func(func: Any = None, *, private: bool = False, check_well_formed: bool = True) -> Any:
    """``@T.prim_func``: parse the decorated function's TVMScript into a PrimFunc.

    Example::

        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            for i in range(128):
                with T.block("B"):
                    vi = T.axis.spatial(128, i)
                    B[vi] = A[vi] * 2.0
    """
    from .parser import parse_function  # noqa: PLC0415 - the parser imports this module

    if func is None:
        return lambda f: parse_function(f)
    return parse_function(func)


class _BufferAnnotation:
    """What ``T.Buffer((128, 128), "float32")`` evaluates to in an annotation."""

    def __init__(
        self, shape: Any = None, dtype: str = "float32", *args: Any, **kwargs: Any
    ) -> None:
        self.shape = shape
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"T.Buffer({self.shape!r}, {self.dtype!r})"


class _BufferType:
    """``T.Buffer``: a buffer parameter's type, called as ``T.Buffer((128, 128), "float32")``
    or subscripted as older TVMScript writes it (the MLC course, TVM before 0.13):
    ``T.Buffer[(128, 128), "float32"]``."""

    def __call__(self, shape: Any = None, dtype: str = "float32", *args: Any, **kwargs: Any) -> Any:
        return _BufferAnnotation(shape, dtype, *args, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, tuple) and key and isinstance(key[0], (tuple, list)):
            return _BufferAnnotation(key[0], *key[1:2])  # [(128, 128), "float32"]
        return _BufferAnnotation(key)  # [(128, 128)] or [128]: float32

    def __repr__(self) -> str:
        return "T.Buffer"


Buffer = _BufferType()


#: an untyped pointer parameter, matched to a buffer with ``T.match_buffer`` in the body
handle = "handle"


def _dtype(name: str):
    def ctor(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise ScriptError(
                f"T.{name}() declares a shape variable inside a @T.prim_func body (n = "
                f"T.{name}() then T.match_buffer(a, (n,))); outside one it has no meaning"
            )
        return args[0]

    ctor.__name__ = name
    ctor.__doc__ = f"The dtype {name} (an annotation) or a {name} constant ``T.{name}(x)``."
    return ctor


for _name in _DTYPES:
    globals()[_name] = _dtype(_name)
    __all__.append(_name)


def __getattr__(name: str) -> Any:
    # every other T.<name> only appears inside parsed bodies; reaching it from Python means
    # the body was executed, which a decorated function never is
    raise AttributeError(
        f"T.{name} is only meaningful inside a @T.prim_func body (which is parsed, never run)"
    )
