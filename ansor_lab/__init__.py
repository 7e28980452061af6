"""ansor_lab: tensor-program scheduling in Python, TVM-shaped (``import ansor_lab as tvm``).

A face: it re-exports ``lower``, ``build``, ``cpu``, ``cuda``, ``nd``, ``Target`` and the
public modules ``te``, ``tir``, ``topi``.
"""

__version__ = "0.1.0"
version = __version__

from . import auto_scheduler, nd, te, tir, topi  # noqa: E402
from .codegen.target import Target  # noqa: E402
from .runtime import build, cpu, cuda, lower  # noqa: E402
from .runtime.ndarray import Device, gpu  # noqa: E402

__all__ = [
    "__version__", "version", "auto_scheduler", "nd", "te", "tir", "topi", "Target", "build",
    "cpu", "cuda", "gpu", "lower", "Device",
]
