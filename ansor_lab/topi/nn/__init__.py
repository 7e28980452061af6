"""Neural-network operators (TVM's ``topi.nn``): convolutions, pools, dense, softmax, norms..."""

from ..missing import missing_operator
from .adaptive_pool import adaptive_pool, adaptive_pool1d, adaptive_pool3d
from .conv1d import conv1d, conv1d_ncw, conv1d_nwc
from .conv2d import conv2d, conv2d_nchw, conv2d_nhwc
from .conv2d_transpose import conv2d_transpose_nchw
from .conv3d import conv3d_ncdhw, conv3d_ndhwc
from .dense import batch_matmul, dense, matmul
from .depthwise_conv2d import depthwise_conv2d_nchw
from .dilate import dilate, flatten
from .elemwise import gelu, leaky_relu, prelu, relu
from .group_conv2d import group_conv2d_nchw
from .layer_norm import layer_norm
from .norm import batch_norm, group_norm, instance_norm, l2_normalize, lrn, rms_norm
from .pad import pad
from .pooling import avg_pool2d, global_pool, max_pool2d, pool1d, pool2d, pool3d
from .softmax import fast_softmax, log_softmax, softmax
from .space_depth import depth_to_space, space_to_depth
from .upsampling import upsampling
from .utils import get_pad_tuple

__all__ = [
    "adaptive_pool",
    "adaptive_pool1d",
    "adaptive_pool3d",
    "avg_pool2d",
    "batch_matmul",
    "batch_norm",
    "conv1d",
    "conv1d_ncw",
    "conv1d_nwc",
    "conv2d",
    "conv2d_nchw",
    "conv2d_nhwc",
    "conv2d_transpose_nchw",
    "conv3d_ncdhw",
    "conv3d_ndhwc",
    "dense",
    "depth_to_space",
    "depthwise_conv2d_nchw",
    "dilate",
    "fast_softmax",
    "flatten",
    "gelu",
    "get_pad_tuple",
    "global_pool",
    "group_conv2d_nchw",
    "group_norm",
    "instance_norm",
    "l2_normalize",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "lrn",
    "matmul",
    "max_pool2d",
    "pad",
    "pool1d",
    "pool2d",
    "pool3d",
    "prelu",
    "relu",
    "rms_norm",
    "softmax",
    "space_to_depth",
    "upsampling",
]


def __getattr__(name: str):
    # topi.nn.deformable_conv2d_nchw, topi.nn.lrn...: not provided, say what to write
    raise missing_operator(__name__, name, __all__)
