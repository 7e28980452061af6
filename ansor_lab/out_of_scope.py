"""TVM modules ansor_lab does not provide, importable so tutorials stop with our message.

``from tvm import relax`` / ``import tvm.relay.testing`` succeed after
``import ansor_lab as tvm``; the first attribute used raises OutOfScopeError saying what is
out of scope and what to write instead (not a raw ImportError at the first line).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types
from typing import Any

from .errors import OutOfScopeError

#: top-level TVM modules that are out of scope, with what to use instead
MODULES = {
    "relax": (
        "tvm.relax (graph-level IR and its compiler) is out of scope for ansor_lab: write each "
        "operator with te.compute / topi, schedule it with tir.Schedule or auto_scheduler, "
        "and call the built functions in order from Python"
    ),
    "autotvm": (
        "tvm.autotvm (template-based tuning) is out of scope for ansor_lab: write the operator "
        "with te.compute and let auto_scheduler search its schedules (no template needed): "
        "auto_scheduler.SearchTask(func=..., args=..., target=...).tune(TuningOptions(...))"
    ),
    "relay": (
        "tvm.relay is out of scope for ansor_lab: write the network's layers with topi "
        "(topi.nn.conv2d_nchw, topi.nn.dense...) and tune them together with "
        "auto_scheduler.TaskScheduler"
    ),
}

#: device APIs that are out of scope (``tvm.opencl()``...)
DEVICES = ("opencl", "vulkan", "metal", "rocm", "hexagon", "webgpu")


class _OutOfScopeModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # tools probe dunders; keep them ordinary
        raise OutOfScopeError(f"{self.__name__}.{name}: {MODULES[_scope_of(self.__name__)]}")


def _scope_of(fullname: str) -> str | None:
    """The out-of-scope module ``fullname`` is or lies in: ``ansor_lab.relax.frontend`` and
    ``ansor_lab.script.relax`` (``from tvm.script import relax as R``) are ``relax``."""
    parts = fullname.split(".")
    if len(parts) >= 2 and parts[0] == "ansor_lab":
        if parts[1] in MODULES:
            return parts[1]
        if len(parts) >= 3 and parts[1] == "script" and parts[2] in MODULES:
            return parts[2]
    return None


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if _scope_of(fullname) is not None:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return _OutOfScopeModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []  # a package, so its submodules import too


def install() -> None:
    """Make the out-of-scope modules importable (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


def device_out_of_scope(name: str):
    """``tvm.opencl()``-style device constructors: a clear error."""

    def ctor(*args: Any, **kwargs: Any) -> Any:
        raise OutOfScopeError(
            f"tvm.{name}(): ansor_lab runs code on the CPU (tvm.cpu()) and on NVIDIA GPUs "
            "(tvm.cuda()); other device kinds are out of scope"
        )

    ctor.__name__ = name
    return ctor
