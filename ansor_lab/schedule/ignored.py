"""Warnings for TVM keywords that ansor_lab accepts and ignores.

TVM code passes keywords we have no use for (``preserve_unit_iters``, ``buffer_index``,
``index_dtype_override``...). Left at TVM's default they change nothing and stay silent;
given another value, TVM's result would differ from ours, so we say so — once per
keyword per process, as a warning (an error would stop TVM code that runs correctly).
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import IgnoredArgumentWarning

#: (api, keyword) pairs already warned about in this process
_WARNED: set[tuple[str, str]] = set()


def warn_ignored(api: str, keyword: str, value: Any, default: Any, stacklevel: int = 3) -> None:
    """Warn (once per ``api`` and ``keyword``) that ``keyword=value`` is ignored."""
    if (api, keyword) in _WARNED:
        return
    _WARNED.add((api, keyword))
    warnings.warn(
        f"{api}: {keyword}={value!r} is accepted for TVM compatibility but ignored: ansor_lab "
        f"behaves as with {keyword}={default!r}, where TVM's result would differ "
        "(this is said once per process)",
        IgnoredArgumentWarning,
        stacklevel=stacklevel,
    )


def reset() -> None:
    """Forget which keywords were warned about (for tests)."""
    _WARNED.clear()
