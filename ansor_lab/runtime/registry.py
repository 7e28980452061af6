"""TVM's global function registry, Python-side: ``tvm.register_func`` / ``tvm.get_global_func``.

Functions registered here are looked up by name from Python. ansor_lab has no C++ runtime
calling back into them: the ``tvm_callback_*`` hooks of TVM's code generators are accepted,
with an ``UnusedCallbackWarning`` saying that they are never called and what happens instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..errors import RegistryError, UnusedCallbackWarning

_FUNCS: dict[str, Callable] = {}

#: TVM's code-generator hooks, and what ansor_lab does instead of calling them
CALLBACKS = {
    "tvm_callback_cuda_compile": (
        "CUDA C is compiled by NVRTC (or nvcc) for the target's -arch when tvm.build "
        "runs; mod.get_source('cuda') shows the source it compiles"
    ),
    "tvm_callback_cuda_postproc": (
        "the CUDA C is used as generated, so that the compiled kernels and the GPU "
        "emulator run one program; mod.get_source('cuda') shows it"
    ),
}


def register_func(
    func_name: str | Callable, f: Callable | None = None, override: bool = False
) -> Any:
    """Register ``f`` under ``func_name`` (TVM's ``tvm.register_func``); used as a
    decorator (``@register_func`` / ``@register_func("name")``) it returns the function."""
    if callable(func_name):
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str) or not func_name:
        raise RegistryError(
            f"register_func: the name must be a non-empty string, got {func_name!r}"
        )

    def register(func: Callable, stacklevel: int = 2) -> Callable:
        if not callable(func):
            raise RegistryError(f"register_func({func_name!r}): {func!r} is not callable")
        if func_name in _FUNCS and not override:
            raise RegistryError(
                f"register_func({func_name!r}): a function is already registered under this "
                "name; pass override=True to replace it"
            )
        if func_name.startswith("tvm_callback_"):
            instead = CALLBACKS.get(func_name, "no code generator here calls back into Python")
            warnings.warn(
                f"{func_name} is registered but ansor_lab never calls it: {instead}",
                UnusedCallbackWarning,
                stacklevel=stacklevel,
            )
        _FUNCS[func_name] = func
        return func

    return register(f, 3) if f is not None else register


def get_global_func(name: str, allow_missing: bool = False) -> Callable | None:
    """The function registered under ``name`` (TVM's ``tvm.get_global_func``); None when
    it is missing and ``allow_missing``, else a RegistryError."""
    func = _FUNCS.get(name)
    if func is None and not allow_missing:
        raise RegistryError(
            f"get_global_func({name!r}): no function is registered under this name (only "
            "functions registered from Python with tvm.register_func are; TVM's built-in "
            "C++ functions do not exist here)"
        )
    return func
