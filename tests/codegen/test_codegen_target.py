"""Targets and devices under TVM's spellings: ``tvm.target.Target``, ``target.kind.name``,
``tvm.device``."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import AnsorLabError


def test_target_module_is_the_same_class():
    assert tvm.target.Target is tvm.Target
    t = tvm.target.Target("llvm -num-cores=3")
    assert t.num_cores == 3 and t.keys == ("cpu",)
    assert str(t).startswith("llvm -mcpu=") and "-num-cores=3" in str(t)


def test_kind_is_a_string_with_tvm_name():
    cpu = tvm.target.Target("llvm")
    gpu = tvm.target.Target({"kind": "cuda", "arch": "sm_80"})
    assert cpu.kind == "llvm" and cpu.kind.name == "llvm"
    assert gpu.kind.name == "cuda" and gpu.arch == "sm_80"
    # a plain string in every serialized form (records store targets as data)
    assert json.dumps({"kind": cpu.kind}) == '{"kind": "llvm"}'
    assert pickle.loads(pickle.dumps(cpu)) == cpu
    assert tvm.target.Target(cpu) == cpu and tvm.target.Target(cpu).kind.name == "llvm"


def test_unknown_kind_says_what_is_supported():
    with pytest.raises(tvm.target.TargetError, match="unknown target kind 'tpu'"):
        tvm.target.Target("tpu")
    for kind in ("rocm", "opencl", "vulkan", "metal"):
        with pytest.raises(tvm.target.TargetError, match=f"'{kind}' is out of scope.*'llvm'"):
            tvm.target.Target(kind)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("cpu", "cpu"),
        ("llvm", "cpu"),
        ("llvm -mcpu=native", "cpu"),
        (1, "cpu"),
        ("cuda", "cuda"),
        ("gpu", "cuda"),
        (2, "cuda"),
    ],
)
def test_device_by_name_or_number(name, kind):
    dev = tvm.device(name, 0)
    assert dev.kind == kind and dev == (tvm.cpu(0) if kind == "cpu" else tvm.cuda(0))


def test_device_from_a_target_runs_a_kernel():
    target = tvm.target.Target("llvm")
    dev = tvm.device(target.kind.name, 0)
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    f = tvm.build(te.create_schedule(B.op), [A, B], target=target)
    a = tvm.nd.array(np.arange(8, dtype="float32"), dev)
    b = tvm.nd.empty((8,), "float32", dev)
    f(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype="float32") * 2)


@pytest.mark.parametrize("bad", ["metal", 7, ""])
def test_unknown_device_is_our_error(bad):
    with pytest.raises(AnsorLabError, match="device"):
        tvm.device(bad)


def test_tvm_signature_target_and_host():
    t = tvm.target.Target(target="llvm -num-cores=2", host="llvm")
    assert t.kind.name == "llvm" and t.num_cores == 2 and t.host is None
    g = tvm.target.Target(target="cuda", host="llvm")
    assert g.kind.name == "cuda" and g.host.kind.name == "llvm"
    with pytest.raises(tvm.target.TargetError, match="host is always this machine's CPU"):
        tvm.target.Target("cuda", host="cuda")


def _times_zero():
    a = te.placeholder((64,), name="A")
    b = te.compute((64,), lambda i: a[i] * 0.0, name="B")
    return te.create_prim_func([a, b])


def test_fast_math_options_read_back_and_reach_the_code():
    """TVM's ``-fast-math`` (all flags) and ``-fast-math-nnan`` ... (the one named) are
    kept in the target, written back by str() (the tuner's builder processes rebuild the
    target from it) and put on every float operation."""
    fast = tvm.target.Target("llvm -fast-math")
    assert fast.fast_math == ("fast",) and "-fast-math" in str(fast)
    assert tvm.target.Target(str(fast)) == fast != tvm.target.Target("llvm")
    some = tvm.target.Target("llvm -fast-math-nsz -fast-math-nnan=true -fast-math-ninf=0")
    assert some.fast_math == ("nnan", "nsz")
    assert tvm.target.Target(str(some)) == some
    assert tvm.target.Target("llvm -fast-math=1").fast_math == ("fast",)
    assert tvm.target.Target("llvm").fast_math == ()

    x = np.array([np.inf, -np.inf, np.nan, 2.0] * 16, dtype="float32")
    exact = tvm.build(_times_zero(), target="llvm")
    assert "fmul contract" in exact.get_source("ll-unopt")
    out = np.empty_like(x)
    exact(x, out)
    assert np.isnan(out[:3]).all() and out[3] == 0.0  # inf * 0 is NaN in IEEE arithmetic
    quick = tvm.build(_times_zero(), target="llvm -fast-math")
    assert "fmul fast" in quick.get_source("ll-unopt")
    quick(x, out)
    np.testing.assert_array_equal(out, 0.0)  # nnan + nsz: x * 0 folds to 0
    named = tvm.build(_times_zero(), target="llvm -fast-math-nnan").get_source("ll-unopt")
    assert "fmul contract nnan" in named and "fast" not in named


def test_fast_math_option_with_a_value_that_is_not_a_boolean_is_our_error():
    with pytest.raises(AnsorLabError, match="on or off; write -fast-math-nnan"):
        tvm.target.Target("llvm -fast-math-nnan=yes")
