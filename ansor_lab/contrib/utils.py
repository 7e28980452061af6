"""``tvm.contrib.utils.tempdir()``: a temporary directory removed when it is collected."""

from __future__ import annotations

import os
import shutil
import tempfile


class TempDirectory:
    """A fresh directory; ``relpath(name)`` is a path inside it."""

    def __init__(self, custom_path: str | None = None, keep_for_debug: bool = False) -> None:
        if custom_path:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = custom_path
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="ansor_lab_")
        self._keep = keep_for_debug or bool(custom_path)

    def relpath(self, name: str) -> str:
        """The path of ``name`` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list[str]:
        """The names in the directory."""
        return os.listdir(self.temp_dir)

    def remove(self) -> None:
        """Delete the directory now."""
        if not self._keep and os.path.isdir(self.temp_dir):
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __del__(self) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"TempDirectory({self.temp_dir!r})"


def tempdir(custom_path: str | None = None, keep_for_debug: bool | None = None) -> TempDirectory:
    """A temporary directory (TVM's ``utils.tempdir``)."""
    return TempDirectory(custom_path, bool(keep_for_debug))
