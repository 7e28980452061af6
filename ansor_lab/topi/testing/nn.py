"""numpy references of softmax, log-softmax, layer norm and the activations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def softmax_python(a_np: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis`` computed in float64, returned in the input dtype."""
    x = a_np.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(a_np.dtype)


def log_softmax_python(a_np: np.ndarray, axis: int = -1) -> np.ndarray:
    """Log-softmax along ``axis`` computed in float64, returned in the input dtype."""
    x = a_np.astype(np.float64)
    shifted = x - x.max(axis=axis, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))).astype(a_np.dtype)


def layer_norm_python(
    data: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray | None,
    axis: Any,
    epsilon: float = 1e-5,
) -> np.ndarray:
    """(data - mean) / sqrt(var + eps) * gamma + beta over ``axis`` (TVM's reference)."""
    axes = tuple(a % data.ndim for a in (axis if isinstance(axis, (tuple, list)) else [axis]))
    x = data.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    # gamma/beta cover the normalised axes in order; give them unit dims elsewhere
    expand = [data.shape[d] if d in axes else 1 for d in range(data.ndim)]
    out = (x - mean) / np.sqrt(var + epsilon) * gamma.astype(np.float64).reshape(expand)
    if beta is not None:
        out = out + beta.astype(np.float64).reshape(expand)
    return out.astype(data.dtype)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_python(x: np.ndarray) -> np.ndarray:
    """0.5 * x * (1 + erf(x / sqrt(2))) computed in float64."""
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + _erf(x64 / math.sqrt(2.0)))).astype(x.dtype)


def relu_python(x: np.ndarray) -> np.ndarray:
    """max(x, 0)."""
    return np.maximum(x, np.zeros((), x.dtype))


def leaky_relu_python(x: np.ndarray, alpha: float) -> np.ndarray:
    """x where x > 0 else alpha * x."""
    return np.where(x > 0, x, x * x.dtype.type(alpha)).astype(x.dtype)


def sigmoid_python(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) computed in float64."""
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(x.dtype)
