"""Neural-network operators (TVM's ``topi.nn``): convolutions, pools, dense, softmax..."""

from ..missing import missing_operator
from .conv1d import conv1d, conv1d_ncw, conv1d_nwc
from .conv2d import conv2d, conv2d_nchw, conv2d_nhwc
from .conv2d_transpose import conv2d_transpose_nchw
from .conv3d import conv3d_ncdhw, conv3d_ndhwc
from .dense import batch_matmul, dense, matmul
from .depthwise_conv2d import depthwise_conv2d_nchw
from .elemwise import gelu, leaky_relu, relu
from .group_conv2d import group_conv2d_nchw
from .layer_norm import layer_norm
from .pad import pad
from .pooling import avg_pool2d, global_pool, max_pool2d, pool2d
from .softmax import log_softmax, softmax
from .utils import get_pad_tuple

__all__ = [
    "avg_pool2d",
    "batch_matmul",
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
    "depthwise_conv2d_nchw",
    "gelu",
    "get_pad_tuple",
    "global_pool",
    "group_conv2d_nchw",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "matmul",
    "max_pool2d",
    "pad",
    "pool2d",
    "relu",
    "softmax",
]


def __getattr__(name: str):
    # topi.nn.deformable_conv2d_nchw, topi.nn.lrn...: not provided, say what to write
    raise missing_operator(__name__, name, __all__)
