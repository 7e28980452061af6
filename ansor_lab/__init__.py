"""ansor_lab: tensor-program scheduling in Python, TVM-shaped (``import ansor_lab as tvm``).

A face: it re-exports ``lower``, ``build``, ``cpu``, ``cuda``, ``device``, ``nd``, ``Target``,
``IRModule`` and the public modules ``te``, ``tir``, ``ir``, ``topi``, ``target``,
``testing``, ``auto_scheduler``.
"""

__version__ = "0.1.0"
version = __version__

from . import auto_scheduler, ir, nd, target, te, testing, tir, topi  # noqa: E402
from .codegen.target import Target  # noqa: E402
from .ir.nodes import IRModule  # noqa: E402
from .runtime import build, cpu, cuda, lower  # noqa: E402
from .runtime.ndarray import Device, device, gpu  # noqa: E402

__all__ = [
    "__version__",
    "version",
    "auto_scheduler",
    "ir",
    "nd",
    "target",
    "te",
    "testing",
    "tir",
    "topi",
    "Target",
    "IRModule",
    "build",
    "cpu",
    "cuda",
    "gpu",
    "device",
    "lower",
    "Device",
    "load_ipython_extension",
    "unload_ipython_extension",
]


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
