"""``tvm.tirx``: newer TVM's (>= 0.22) name for ``tvm.tir``; the same names, and ``build``.

TVM renamed ``tvm.tir`` to ``tvm.tirx`` and ``tvm.script.tir`` to ``tvm.script.tirx``;
tutorials written for it run unchanged after the import swap.
"""

from __future__ import annotations

from typing import Any

from . import tir as _tir
from .runtime import build

__all__ = ["build", *_tir.__all__]

globals().update({name: getattr(_tir, name) for name in _tir.__all__})


def __getattr__(name: str) -> Any:
    return getattr(_tir, name)
