"""``tvm.testing``: test helpers under TVM's names (a face over ``runtime.testing``)."""

from ..runtime.testing import assert_allclose
from . import utils

__all__ = ["assert_allclose", "utils"]
