"""Code built for another CPU cannot kill the caller: it is probed in a child first.

The dangerous scenario runs in a subprocess of pytest, so a regression kills that
subprocess, not the test session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.cpu_match import foreign_reason
from ansor_lab.codegen.target import host_cpu
from ansor_lab.errors import ForeignTargetError
from ansor_lab.runtime import foreign

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: AMD Bulldozer: FMA4 (vfmaddps, 4 operands) and no FMA3, so a multiply-add kernel is
#: compiled to an instruction Intel CPUs (and AMD since Zen) lack
FOREIGN = "llvm -mcpu=bdver1"

SCRIPT = """
import sys
import numpy as np
import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import ForeignTargetError

n = 1024
A = te.placeholder((n,), name="A")
B = te.placeholder((n,), name="B")
C = te.compute((n,), lambda i: A[i] * B[i] + A[i], name="C")
f = tvm.build(te.create_schedule(C.op), [A, B, C], target={target!r})
a, b, c = (np.full(n, 1.5, "float32") for _ in range(3))
ptrs = [x.ctypes.data for x in (a, b, c)]
if {raw!r}:
    f._entry(*ptrs)  # unprotected: what a call did before the probe
    print("SURVIVED")
    sys.exit(0)
try:
    {call}
except ForeignTargetError as err:
    print("OURS:", err)
    sys.exit(3)
print("RAN")
"""


def _run(target: str, raw: bool = False, call: str = "f(a, b, c)") -> subprocess.CompletedProcess:
    code = textwrap.dedent(SCRIPT).format(target=target, raw=raw, call=call)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def _host_has_fma4() -> bool:
    return "+fma4" in host_cpu()[1].split(",")


def _kernel(target: str):
    n = 256
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] * B[i] + A[i], name="C")
    return tvm.build(te.create_schedule(C.op), [A, B, C], target=target)


@pytest.mark.skipif(_host_has_fma4(), reason="this CPU has FMA4: bdver1 code runs here")
def test_foreign_cpu_code_gives_our_error_not_sigill():
    unprotected = _run(FOREIGN, raw=True)
    # the fault is real: the same kernel called directly dies with SIGILL
    assert unprotected.returncode == -signal.SIGILL, unprotected
    assert "SURVIVED" not in unprotected.stdout
    for call in ("f(a, b, c)", "f.time_evaluator(f.entry_name, number=2)(a, b, c)"):
        proc = _run(FOREIGN, call=call)
        assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
        msg = proc.stdout
        assert "OURS:" in msg and "built for -mcpu=bdver1" in msg
        assert f"this machine is {host_cpu()[0]}" in msg
        assert "instruction this CPU lacks" in msg and "SIGILL" in msg
        assert "target='llvm'" in msg and "DaskRunner" in msg


def test_foreign_error_in_process(monkeypatch):
    """In-process: the probe's verdict becomes ForeignTargetError, the kernel is not run."""
    f = _kernel("llvm -mcpu=haswell")
    calls = []

    def fake_run(*args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, -signal.SIGILL, b"", b"")

    monkeypatch.setattr(foreign.subprocess, "run", fake_run)
    a = np.ones(256, "float32")
    c = np.zeros(256, "float32")
    with pytest.raises(ForeignTargetError, match="build for target='llvm'|Build for target='llvm'"):
        f(a, a.copy(), c)
    assert len(calls) == 1 and not c.any()  # the kernel did not run here
    with pytest.raises(ForeignTargetError, match="SIGILL"):  # still unsafe: probed again
        f(a, a.copy(), c)


def test_older_cpu_runs_in_process_after_one_probe(monkeypatch):
    f = _kernel("llvm -mcpu=haswell")
    assert f.foreign is not None
    probes = []
    real = foreign.probe

    def counting(module, arrays):
        probes.append(time.perf_counter())
        start = time.perf_counter()
        real(module, arrays)
        probes[-1] = time.perf_counter() - start

    monkeypatch.setattr(foreign, "probe", counting)
    rng = np.random.default_rng(0)
    a, b = (rng.random(256, dtype=np.float32) for _ in range(2))
    c = np.zeros(256, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a * b + a, rtol=1e-6)
    c[:] = 0
    f(a, b, c)
    f.time_evaluator(f.entry_name, number=2)(a, b, c)
    np.testing.assert_allclose(c, a * b + a, rtol=1e-6)
    assert len(probes) == 1  # the first call only


@pytest.mark.parametrize("spec", ["llvm", "llvm -mcpu={host}", "llvm -mattr=+avx2,+sse2"])
def test_host_target_is_never_probed(monkeypatch, spec):
    if "avx2" in spec and "+avx2" not in host_cpu()[1].split(","):
        pytest.skip("this CPU has no AVX2")
    target = spec.format(host=host_cpu()[0])
    assert foreign_reason(target) is None

    def no_probe(module, arrays):
        raise AssertionError("a module for this machine was probed")

    monkeypatch.setattr(foreign, "probe", no_probe)
    f = _kernel(target)
    a = np.ones(256, "float32")
    c = np.zeros(256, "float32")
    f(a, a.copy(), c)
    f.time_evaluator(f.entry_name, number=1)(a, a.copy(), c)
    assert (c == 2).all() and f.foreign is None


def test_foreign_reason_definition():
    host = host_cpu()[0]
    assert "not 'haswell'" in foreign_reason("llvm -mcpu=haswell")
    missing = foreign_reason(f"llvm -mcpu={host} -mattr=+avx2,+fma4")
    if not _host_has_fma4():
        assert missing == f"CPU {host!r} without fma4"
