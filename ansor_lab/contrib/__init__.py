"""``tvm.contrib``: the helpers tutorials use around saving modules (``utils``, ``cc``), and
``cblas``, whose external calls say what to write instead."""

from . import cblas, cc, utils

__all__ = ["cblas", "cc", "utils"]
