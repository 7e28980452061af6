"""ansor_lab: tensor-program scheduling in Python, TVM-shaped (``import ansor_lab as tvm``).

A face: it re-exports ``lower``, ``build``, ``cpu``, ``cuda``, ``device``, ``nd``, ``Target``,
``IRModule``, ``DataType``, ``register_func`` / ``get_global_func`` and the public modules
``te``, ``tir``, ``ir``, ``arith``, ``error``, ``topi``, ``target``, ``testing``,
``auto_scheduler``.
"""

__version__ = "0.1.0"
version = __version__

from . import (  # noqa: E402
    arith,
    auto_scheduler,
    contrib,
    error,
    ir,
    meta_schedule,
    missing_names as _missing_names,
    nd,
    out_of_scope as _out_of_scope,  # noqa: E402
    runtime,  # noqa: E402
    s_tir,
    script,
    target,
    te,
    testing,
    tir,
    tirx,
    topi,
)
from .codegen.target import Target  # noqa: E402
from .dsl.datatype import DataType  # noqa: E402
from .ir import transform  # noqa: E402 - tvm.transform.PassContext
from .ir.nodes import IRModule  # noqa: E402
from .runtime import (  # noqa: E402
    build,
    build as compile,  # noqa: E402, A004 - TVM >= 0.22's tvm.compile
    cpu,
    cuda,
    lower,
)
from .runtime.ndarray import Device, device, gpu  # noqa: E402
from .runtime.registry import get_global_func, register_func  # noqa: E402

__all__ = [
    "__version__",
    "version",
    "arith",
    "error",
    "DataType",
    "get_global_func",
    "register_func",
    "auto_scheduler",
    "contrib",
    "ir",
    "runtime",
    "meta_schedule",
    "nd",
    "s_tir",
    "script",
    "target",
    "te",
    "testing",
    "tir",
    "tirx",
    "topi",
    "transform",
    "Target",
    "IRModule",
    "build",
    "compile",
    "cpu",
    "cuda",
    "gpu",
    "device",
    "lower",
    "Device",
    "load_ipython_extension",
    "unload_ipython_extension",
]


_missing_top = _missing_names.module_getattr(__name__, _missing_names.TOP)
_out_of_scope.install()
for _device in _out_of_scope.DEVICES:
    globals()[_device] = _out_of_scope.device_out_of_scope(_device)


def __getattr__(name: str):
    # ``tvm.relax`` without importing it first: TVM's top level exposes these
    if name in _out_of_scope.MODULES:
        import importlib  # noqa: PLC0415 - only for the out-of-scope names

        return importlib.import_module(f"{__name__}.{name}")
    return _missing_top(name)  # TVM names not provided: say what to write


def load_ipython_extension(ipython) -> None:
    """``%load_ext ansor_lab``: rich displays and the ``%ansor_target`` magic."""
    from .jupyter.extension import load_ipython_extension as load  # noqa: PLC0415 - IPython only

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext ansor_lab``: remove what ``load_ipython_extension`` registered."""
    from .jupyter.extension import unload_ipython_extension as unload  # noqa: PLC0415

    unload(ipython)


def _jupyter_labextension_paths() -> list[dict]:
    """The prebuilt JupyterLab extension (``jupyter labextension develop`` links it)."""
    from .jupyter.labext import labextension_paths  # noqa: PLC0415 - Jupyter tooling only

    return labextension_paths()
