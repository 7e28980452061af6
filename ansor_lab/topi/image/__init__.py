"""Image operators (TVM's ``topi.image``): resizing, crop-and-resize, grid sampling.

``resize1d`` / ``resize2d`` / ``resize3d`` (nearest, linear and cubic under every ONNX
coordinate transformation mode), ``crop_and_resize`` (TensorFlow's), ``grid_sample`` and
``affine_grid`` (PyTorch's). Each is one ``te.compute`` that gathers at computed,
clamped indices; ``topi.testing`` has their numpy references.
"""

from ..missing import missing_operator
from .crop import crop_and_resize
from .grid_sample import affine_grid, grid_sample
from .resize_nd import resize1d, resize2d, resize3d

__all__ = [
    "affine_grid",
    "crop_and_resize",
    "grid_sample",
    "resize1d",
    "resize2d",
    "resize3d",
]


def __getattr__(name: str):
    # topi.image.dilation2d, topi.image.resize (TVM's old name)...: say what to write
    raise missing_operator(__name__, name, __all__)
