"""``tvm.testing``: test helpers under TVM's names (a face over ``runtime.testing``)."""

from .runtime.testing import assert_allclose

__all__ = ["assert_allclose"]
