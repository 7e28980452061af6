"""Link object files into a shared library with the system's C compiler (``tvm.contrib.cc``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from ..errors import CodegenError


def find_compiler(cc: str | None = None) -> str:
    """The C compiler to link with: ``cc``, $CC, then cc / gcc / clang on the PATH."""
    for name in (cc, os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)  # type: ignore[return-value]
    raise CodegenError(
        "no C compiler found (cc, gcc or clang) to link a shared library: install one "
        "(e.g. apt-get install gcc), or keep the object file (mod.save('f.o')) and load it "
        "with tvm.runtime.load_module('f.o')"
    )


def create_shared(
    output: str,
    objects: str | Sequence[str],
    options: Sequence[str] | None = None,
    cc: str | None = None,
    cwd: str | None = None,
) -> None:
    """``cc -shared -fPIC -o output objects... -lm`` (TVM's ``contrib.cc.create_shared``)."""
    objs = [objects] if isinstance(objects, str) else list(objects)
    for obj in objs:
        if not os.path.exists(obj):
            raise CodegenError(f"create_shared: object file {obj!r} does not exist")
    cmd = [find_compiler(cc), "-shared", "-fPIC", "-o", str(output), *map(str, objs)]
    cmd += [*(options or []), "-lm"]
    if _needs_openmp(objs):
        cmd.append("-lgomp")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, check=False)
    if proc.returncode != 0:
        raise CodegenError(
            f"linking {output!r} failed ({' '.join(cmd)}):\n{proc.stderr.strip()[:2000]}"
        )


def _needs_openmp(objs: list[str]) -> bool:
    for obj in objs:
        with open(obj, "rb") as f:
            if b"GOMP_" in f.read():
                return True
    return False
