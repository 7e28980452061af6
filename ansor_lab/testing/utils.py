"""``tvm.testing.utils``: what TVM's tutorials call from it."""

from __future__ import annotations


def install_request_hook(depth: int = 0) -> None:
    """Nothing to install: TVM's documentation build uses this hook to refuse downloads
    while it runs the tutorials (their first lines call it); ansor_lab makes none."""
    del depth
