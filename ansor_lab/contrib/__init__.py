"""``tvm.contrib``: the helpers tutorials use around saving modules (``utils``, ``cc``)."""

from . import cc, utils

__all__ = ["cc", "utils"]
