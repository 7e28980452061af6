"""Independent numpy references of the topi operators (TVM's ``topi.testing`` names).

Written directly in numpy, never through the DSL, so they can judge it. Also TVM's
schedule-dispatch helpers (``get_injective_schedule(target)``...) its topi tests call.
"""

from ..schedules.dispatch import (
    dispatch,
    get_broadcast_schedule,
    get_conv2d_nchw_implement,
    get_elemwise_schedule,
    get_injective_schedule,
    get_reduce_schedule,
)
from .conv2d import (
    conv2d_nchw_python,
    conv2d_nhwc_python,
    depthwise_conv2d_python_nchw,
    dilate_python,
    group_conv2d_nchw_python,
)
from .conv2d_transpose import conv2d_transpose_nchw_python
from .conv_nd import conv1d_ncw_python, conv3d_ncdhw_python, group_conv1d_ncw_python
from .matmul import batch_matmul, dense, matmul
from .nn import (
    gelu_python,
    layer_norm_python,
    leaky_relu_python,
    log_softmax_python,
    relu_python,
    sigmoid_python,
    softmax_python,
)
from .norm import (
    batch_norm,
    group_norm_python,
    instance_norm_python,
    l2_normalize_python,
    lrn_python,
    rms_norm_python,
)
from .pooling import pool2d_python
from .resample import (
    adaptive_pool,
    depth_to_space_python,
    space_to_depth_python,
    upsampling_python,
)
from .resize import (
    affine_grid_python,
    crop_and_resize_python,
    grid_sample_python,
    resize1d_python,
    resize2d_python,
    resize3d_python,
)

__all__ = [
    "adaptive_pool",
    "affine_grid_python",
    "batch_matmul",
    "batch_norm",
    "conv1d_ncw_python",
    "conv2d_nchw_python",
    "conv2d_nhwc_python",
    "conv2d_transpose_nchw_python",
    "conv3d_ncdhw_python",
    "crop_and_resize_python",
    "dense",
    "dispatch",
    "get_broadcast_schedule",
    "get_conv2d_nchw_implement",
    "get_elemwise_schedule",
    "get_injective_schedule",
    "get_reduce_schedule",
    "depth_to_space_python",
    "depthwise_conv2d_python_nchw",
    "dilate_python",
    "gelu_python",
    "grid_sample_python",
    "group_conv1d_ncw_python",
    "group_conv2d_nchw_python",
    "group_norm_python",
    "instance_norm_python",
    "l2_normalize_python",
    "layer_norm_python",
    "leaky_relu_python",
    "log_softmax_python",
    "lrn_python",
    "matmul",
    "pool2d_python",
    "relu_python",
    "resize1d_python",
    "resize2d_python",
    "resize3d_python",
    "rms_norm_python",
    "sigmoid_python",
    "softmax_python",
    "space_to_depth_python",
    "upsampling_python",
]
