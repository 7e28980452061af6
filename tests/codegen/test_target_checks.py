"""Targets LLVM or the hardware cannot have are refused when the Target is made.

LLVM aborts the whole process when asked to generate code for a CPU it does not know (or
a 32-bit CPU, or -mattr=-64bit), so the builds that used to abort run in a child process
here: a regression fails the test instead of killing pytest.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import ansor_lab as tvm
from ansor_lab.codegen.target_check import _parse_help, llvm_names
from ansor_lab.errors import AnsorLabError, TargetError

BUILD_IN_CHILD = """
import sys
import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import TargetError
A = te.placeholder((16,), name="A")
B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
try:
    tvm.build(te.create_schedule(B.op), [A, B], target=sys.argv[1])
except TargetError as err:
    print("TargetError:", err)
else:
    print("built")
"""


def _build_in_child(target: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BUILD_IN_CHILD, target],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("llvm -mcpu=notacpu", "is not a CPU LLVM knows"),
        ("llvm -mcpu=i386", "64-bit code requested"),
        ("llvm -mattr=-64bit", "64-bit code requested"),
    ],
)
def test_targets_that_aborted_the_process_are_target_errors(target, says):
    proc = _build_in_child(target)
    assert proc.returncode == 0, f"the build aborted the process: {proc.stderr[-500:]}"
    assert proc.stdout.startswith("TargetError:"), proc.stdout + proc.stderr[-500:]
    assert says in proc.stdout
    assert "leave -mcpu" in proc.stdout  # what to do


def test_unknown_cpu_lists_close_names():
    with pytest.raises(TargetError, match="did you mean skylake-avx512") as info:
        tvm.Target("llvm -mcpu=skylake-avx51")
    assert "this machine's CPU" in str(info.value)


def test_unknown_feature_lists_close_names():
    with pytest.raises(TargetError, match=r"'avx5l2f' is not a feature .*did you mean avx512f"):
        tvm.Target("llvm -mattr=+avx2,+avx5l2f")
    with pytest.raises(TargetError, match="'notafeature' is not a feature"):
        tvm.Target("llvm -mattr=+notafeature")
    with pytest.raises(TargetError, match=r"must be \+feature or -feature"):
        tvm.Target("llvm -mattr=avx2")


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("llvm -num-cores=100000000000", "out of range: it must be between 1 and 4096"),
        ("llvm -num-cores=0", "out of range"),
        ("llvm -num-cores=-4", "out of range"),
        ("llvm -num-cores=2.5", "not a whole number"),
        ("llvm -num-cores=two", "not a whole number"),
        ("llvm -num-cores=" + "9" * 5000, "not a whole number"),
        ({"kind": "llvm", "num-cores": True}, "not a whole number"),
        ({"kind": "llvm", "num-cores": [2]}, "not a whole number"),
        ({"kind": "llvm", "num-cores": float("nan")}, "not a whole number"),
        ("llvm -vector-bytes=0", "vector-bytes"),
        ("llvm -num-corse=2", "did you mean -num-cores"),
        ("llvm -mtriple=aarch64-linux-gnu", "leave -mtriple out"),
        ({"kind": "llvm", "mcpu": 7}, "CPU name string"),
        ({"kind": "llvm", "mattr": 7}, "-mattr must be a string"),
        ("cuda -arch=sm_x", "should look like 'sm_90'"),
        ("cuda -arch=sm_90 -max_num_threads=0", "max_num_threads"),
        ("cuda -arch=sm_90 -max_num_threads=99999999999", "out of range"),
        ({"kind": "cuda", "max_shared_memory_per_block": -1}, "out of range"),
        ({"kind": "cuda", "thread_warp_size": "x"}, "not a whole number"),
        ("cuda -archh=sm_80", "did you mean -arch"),
    ],
)
def test_absurd_target_values_are_refused(target, says):
    with pytest.raises(TargetError) as info:
        tvm.Target(target)
    assert says in str(info.value)
    assert isinstance(info.value, AnsorLabError)


def test_num_cores_error_says_how_many_this_machine_has():
    with pytest.raises(TargetError, match=r"this machine has \d+ usable cores"):
        tvm.Target("llvm -num-cores=100000000000")


@pytest.mark.parametrize(
    "target",
    [
        "llvm",
        "llvm -mcpu=native",
        "llvm -mcpu=x86-64",
        "llvm -mcpu=skylake -mattr=+avx2,-fma",
        "llvm -num-cores=3 -opt-level=3 -keys=cpu",
        {"kind": "llvm", "num-cores": 2, "mcpu": "x86-64"},
        "cuda -arch=sm_80 -max_num_threads=512",
    ],
)
def test_real_targets_still_work(target):
    t = tvm.Target(target)
    assert t.kind in ("llvm", "cuda")
    assert str(tvm.Target(str(t))) == str(t)


def test_a_known_cpu_builds_and_runs():
    # a CPU other than this machine's goes through the child-process check and works
    import numpy as np

    from ansor_lab import te

    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    f = tvm.build(te.create_schedule(B.op), [A, B], target="llvm -mcpu=x86-64")
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, dtype="float32")
    f(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_llvm_names_list_this_architecture():
    cpus, feats = llvm_names()
    assert "x86-64" in cpus or "generic" in cpus
    assert len(cpus) > 10 and len(feats) > 10


def test_help_listing_is_parsed():
    text = (
        "Available CPUs for this target:\n\n  alpha  - Select the alpha processor.\n"
        "  beta-2 - Select the beta-2 processor.\n\n"
        "Available features for this target:\n\n  f1  - Enable f1.\n  g-2 - Enable g.\n\n"
        "Use +feature to enable a feature, or -feature to disable it.\n"
        "For example, llc -mcpu=mycpu -mattr=+feature1,-feature2\n"
    )
    assert _parse_help(text) == (frozenset({"alpha", "beta-2"}), frozenset({"f1", "g-2"}))
