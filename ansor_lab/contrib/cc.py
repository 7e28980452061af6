"""``tvm.contrib.cc``: link objects into a shared library with the system's C compiler."""

from ..runtime.shared_library import create_shared, find_compiler

__all__ = ["create_shared", "find_compiler"]
