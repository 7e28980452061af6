"""Saving built modules and loading them back: save(.o), export_library(.so/.tar), load_module."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.contrib import cc, utils
from ansor_lab.errors import RuntimeArgumentError

N = 1000


def _vector_add():
    A = te.placeholder((N,), name="A")
    B = te.placeholder((N,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=64)
    s[C].parallel(xo)
    s[C].vectorize(xi)
    return tvm.build(s, [A, B, C], "llvm", name="myadd")


def _arrays():
    rng = np.random.default_rng(0)
    return rng.random(N, dtype="float32"), rng.random(N, dtype="float32")


def test_the_tutorial_flow_save_create_shared_load():
    fadd = _vector_add()
    temp = utils.tempdir()
    fadd.save(temp.relpath("myadd.o"))
    cc.create_shared(temp.relpath("myadd.so"), [temp.relpath("myadd.o")])
    assert sorted(temp.listdir()) == ["myadd.o", "myadd.so"]
    a, b = _arrays()
    for name in ("myadd.so", "myadd.o"):
        loaded = tvm.runtime.load_module(temp.relpath(name))
        c = np.zeros(N, "float32")
        loaded(a, b, c)
        np.testing.assert_array_equal(c, a + b)
        assert loaded["myadd"] is loaded and loaded.entry_name == "myadd"
        with pytest.raises(RuntimeArgumentError, match="takes 3 arrays"):
            loaded(a, b)
        with pytest.raises(RuntimeArgumentError, match="dtype float64"):
            loaded(a.astype("float64"), b, c)


@pytest.mark.parametrize("suffix", [".so", ".tar"])
def test_export_library_and_time_the_loaded_module(suffix: str, tmp_path):
    path = str(tmp_path / f"lib{suffix}")
    _vector_add().export_library(path)
    loaded = tvm.runtime.load_module(path)
    a, b = _arrays()
    c = np.zeros(N, "float32")
    assert loaded.time_evaluator("myadd", tvm.cpu(), number=5)(a, b, c).mean > 0
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(RuntimeArgumentError, match="cannot be saved again"):
        loaded.export_library(str(tmp_path / "again.so"))


def test_a_plain_script_loads_the_library(tmp_path):
    # the "traces reused in scripts" use: another process, no schedule, only the file
    path = tmp_path / "myadd.so"
    _vector_add().export_library(str(path))
    script = textwrap.dedent(
        f"""
        import numpy as np, ansor_lab as tvm
        f = tvm.runtime.load_module({str(path)!r})
        a = np.arange({N}, dtype="float32"); c = np.zeros({N}, "float32")
        f(a, a, c)
        print(float(c.sum()))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == float((2 * np.arange(N, dtype="float32")).sum())


def test_bad_files_are_clear(tmp_path):
    with pytest.raises(RuntimeArgumentError, match="no file"):
        tvm.runtime.load_module(str(tmp_path / "missing.so"))
    bogus = tmp_path / "x.txt"
    bogus.write_text("hi")
    with pytest.raises(RuntimeArgumentError, match=r"use a \.so, \.o or \.tar"):
        tvm.runtime.load_module(str(bogus))
    with pytest.raises(RuntimeArgumentError, match=r"\.o \(object\)"):
        _vector_add().save(str(tmp_path / "f.bin"))
