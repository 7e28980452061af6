"""``tvm.contrib.cblas``: external BLAS calls. Importable (tutorials import it first), but
its operators are ``te.extern`` calls, which ansor_lab does not compile: each says what to
write instead. ``tvm.get_global_func("tvm.contrib.cblas.matmul", allow_missing=True)`` is
None here, as in a TVM built without BLAS."""

from __future__ import annotations

from typing import Any

from ..errors import DSLError

_INSTEAD = (
    "ansor_lab compiles only te.compute operators; write the product as a te.compute "
    "(te.sum(A[i, k] * B[k, j], axis=k), or topi.nn.matmul / topi.nn.batch_matmul) and "
    "let the auto-scheduler tune it, or call numpy on the arrays around the built function"
)


def matmul(lhs: Any, rhs: Any, transa: bool = False, transb: bool = False, **kwargs: Any) -> Any:
    """Not supported: an external BLAS ``gemm`` (``te.extern``)."""
    raise DSLError(f"cblas.matmul is an external BLAS call: {_INSTEAD}")


def batch_matmul(
    lhs: Any, rhs: Any, transa: bool = False, transb: bool = False, **kwargs: Any
) -> Any:
    """Not supported: an external BLAS batched ``gemm`` (``te.extern``)."""
    raise DSLError(f"cblas.batch_matmul is an external BLAS call: {_INSTEAD}")
