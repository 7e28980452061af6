"""Code built for another CPU: probe it in a child process before it runs in ours.

``tvm.build(s, args, target="llvm -mcpu=bdver1")`` compiles fine on any x86 machine, but
calling the result runs that CPU's instructions here: one this CPU lacks (FMA4, AMX,
APX, ...) raises SIGILL and kills the caller's Python process. So the first call of a
module whose target is *foreign* (``codegen.cpu_match.foreign_reason``: another
``-mcpu``, or a ``-mattr`` feature this machine lacks) first runs the same machine code
-- the module's own optimized LLVM module, emitted as an object file -- in a child
process (``python -m ansor_lab.runtime.foreign``), on copies of the caller's arrays,
linked by ``codegen.llvm.load_object`` as the tuner's runner does. If the child dies,
the call raises ``ForeignTargetError`` instead; if it lives, the module is marked safe
and runs in this process from then on. A module for this machine is never probed.

The probe covers the paths the kernel takes on the arrays of that first call; the
machine code of a kernel does not change with the data, only its branches do.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Sequence

import numpy as np

from ..codegen.llvm import load_object
from ..codegen.target import Target, host_cpu
from ..errors import ForeignTargetError
from .ndarray import aligned_copy

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LAST_WORDS = 1500


def _child_env() -> dict:
    """Our environment, with this copy of ansor_lab importable by ``python -m``."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = _PACKAGE_ROOT + (os.pathsep + path if path else "")
    return env


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def probe(module, arrays: Sequence[np.ndarray]) -> None:
    """Run ``module``'s kernel once in a child process on copies of ``arrays``.

    Returns when the child survived; raises ``ForeignTargetError`` when it died.
    """
    compiled = module.compiled
    obj = compiled.target_machine.emit_object(compiled.module_ref)
    request = {
        "obj": obj,
        "entry": module.entry_name,
        "target": module.target,
        "arrays": [np.asarray(a) for a in arrays],
    }
    proc = subprocess.run(
        [sys.executable, "-m", "ansor_lab.runtime.foreign"],
        input=pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL),
        capture_output=True,
        env=_child_env(),
        check=False,
    )
    if proc.returncode == 0:
        return
    raise ForeignTargetError(_message(module, proc))


def _message(module, proc: subprocess.CompletedProcess) -> str:
    target: Target = module.target
    built = f"-mcpu={target.mcpu}" + (f" -mattr={target.mattr}" if target.mattr else "")
    here = host_cpu()[0]
    code = proc.returncode
    if code < 0:
        sig = _signal_name(code)
        what = (
            "the kernel uses an instruction this CPU lacks"
            if -code == signal.SIGILL
            else "the kernel crashed running its machine code here"
        )
        why = f"{what} ({sig}: it killed the probe process, exit code {code})"
    else:
        words = proc.stderr.decode("utf-8", errors="replace").strip()[-_LAST_WORDS:]
        why = f"the probe process failed (exit code {code}); its stderr ended with:\n{words}"
    return (
        f"{module.entry_name} was built for {built}, this machine is {here} "
        f"({module.foreign}): {why}. Build for target='llvm' to run here, or measure on a "
        "machine with that CPU (auto_scheduler.DaskRunner); the kernel was not run in "
        "this process"
    )


def _child() -> None:
    """The probe process: link the object, call the kernel once, exit 0 if it returns."""
    request = pickle.loads(sys.stdin.buffer.read())
    loaded = load_object(request["obj"], request["entry"], request["target"])
    arrays = [aligned_copy(a) for a in request["arrays"]]
    n = len(arrays)
    entry = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * n))(loaded.entry_address)
    entry(*[a.ctypes.data for a in arrays])  # its return code is the parent's to read
    sys.stdout.flush()


if __name__ == "__main__":
    _child()
