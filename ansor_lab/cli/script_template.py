"""The script `ansor-lab export` writes: a best program, rebuilt with plain ansor_lab."""

from __future__ import annotations

import pprint

HEADER = '''"""A best program from a tuning log, rebuilt, checked and timed with plain ansor_lab.

Written by `ansor-lab export`; run it with `python SCRIPT.py`: it rebuilds the workload
from its DAG, applies the schedule below, builds the kernel, checks it against the numpy
reference and prints its time. Exit status 0 when the check passes, 1 when it does not.
"""

import sys

import numpy as np

import ansor_lab
from ansor_lab import te, tir
from ansor_lab.dsl.serialize import dag_from_json

# what the log says (values only: every text from the log is a quoted literal here)
WORKLOAD_KEY = {workload!r}
SOURCE_LOG = {log!r}
TARGET = {target!r}
MEASURED_SECONDS = {cost!r}
MEASURED_BY = {version!r}
'''

BODY = '''

def main(number: int = 10, repeat: int = 3) -> int:
    """Build, check and time the program; 0 when it matches the reference."""
    args = dag_from_json(DAG)
    sch = tir.Schedule(te.create_prim_func(args))
    apply_trace(sch)
    print(sch.mod.script())
    func = ansor_lab.build(sch.mod, target=TARGET)
    rng = np.random.default_rng(0)
    arrays = []
    for t in args:
        if t.dtype.startswith("float"):
            arrays.append(rng.uniform(-1, 1, size=t.shape).astype(t.dtype))
        else:
            arrays.append(rng.integers(-4, 5, size=t.shape).astype(t.dtype))
    inputs = {{t: a for t, a in zip(args, arrays) if isinstance(t.op, te.PlaceholderOp)}}
    expected = te.evaluate(args, inputs)
    func(*arrays)
    ok = True
    for t, a in zip(args, arrays):
        if t in inputs:
            continue
        want = expected[t]
        tol = 1e-3 if a.dtype.kind == "f" else 0
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        err = float(np.max(np.abs(a.astype("float64") - want.astype("float64")), initial=0.0))
        good = err <= tol * scale
        ok = ok and good
        print(f"{{t.name}}: max abs error {{err:.3g}} ({{'OK' if good else 'MISMATCH'}})")
    cost = func.time_evaluator(number=number, repeat=repeat, min_repeat_ms=50)(*arrays).mean
    print(f"time: {{cost * 1e6:.3f}} us, {{FLOP_CT / cost / 1e9:.2f}} GFLOPS on {{TARGET}}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
'''


def render(record: dict, trace_python: str, log: str, version: str) -> str:
    """The whole script for one record (a log line as a dict) and its trace as Python."""
    cost = sum(record["costs"]) / len(record["costs"])
    head = HEADER.format(
        workload=str(record["workload_key"]),
        log=str(log),
        target=str(record["target"]),
        cost=float(cost),
        version=f"ansor_lab {version}",
    )
    data = (
        f"FLOP_CT = {float(record['flop_ct'])!r}\n\n"
        "# the workload's DAG as the record stores it (plain data)\n"
        f"DAG = {pprint.pformat(record['dag'], width=96, compact=True)}\n\n\n"
    )
    return head + data + trace_python + "\n" + BODY.format()
