"""Re-time the best program of a MetaSchedule work dir (runs with the TVM venv's python).

    TVM_NUM_THREADS=1 /root/tvmvenv/bin/python bench/tvm_side/ms_retime.py \
        --work-dir DIR --workload '{"name": "matmul", "n": 1024}' --threads 1 --first 64

Reads the tuning records in the order they were measured (``--first N``: only the first N,
i.e. the best program a budget of N found), replays the fastest one, checks it whole and
times it as ms_tune.py does (weight repacks removed, as MetaSchedule's builder times it;
wall clock, and the CPU clock on 1 thread). Useful to re-time a long MetaSchedule run
again later, next to ours, when the machine is quieter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics

import numpy as np
from ms_tune import cpu_times, deployed_build, host_mcpu, workload


def main() -> int:
    """Load, pick the best of the first N records, replay, time, print JSON ({N: ...})."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work-dir", required=True)
    p.add_argument("--workload", required=True, help="JSON spec, as ms_tune.py takes")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--first",
        default="0",
        help="comma-separated N: the best of the first N records for each (0: all)",
    )
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--number", type=int, default=5)
    p.add_argument("--min-repeat-ms", type=int, default=50)
    p.add_argument("--mcpu", default=None, help="LLVM CPU name (default: this machine's)")
    args = p.parse_args()

    import tvm
    from tvm.s_tir import meta_schedule as ms

    tensors, flops, np_fn = workload(json.loads(args.workload))
    with open(os.path.join(args.work_dir, "database_workload.json")) as fh:
        workloads = [
            ms.database.Workload.from_json(json.loads(line)) for line in fh if line.strip()
        ]
    records = []
    with open(os.path.join(args.work_dir, "database_tuning_record.json")) as fh:
        for line in fh:
            if line.strip():
                idx, rec = json.loads(line)
                records.append((idx, rec))
    mcpu = args.mcpu or host_mcpu()
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": args.threads})
    dev = tvm.cpu(0)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, size=[int(d) for d in t.shape]).astype("float32") for t in tensors]
    want = np_fn(*[a.astype("float64") for a in arrays[:-1]])
    out = {}
    for first in (int(x) for x in args.first.split(",")):
        subset = records[:first] if first else records
        best, best_cost = None, float("inf")
        for idx, rec in subset:
            secs = rec[1]
            if secs:
                cost = float(np.mean([float(x) for x in secs]))
                if cost < best_cost:
                    best, best_cost = (idx, rec), cost
        if best is None:
            continue
        wl = workloads[best[0]]
        record = ms.database.TuningRecord.from_json(best[1], wl)
        sch = tvm.s_tir.Schedule(wl.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        f = tvm.compile(sch.mod, target=target)
        f = f.jit() if hasattr(f, "jit") else f
        nd = [tvm.runtime.tensor(a, dev) for a in arrays]
        f["main"](*nd)
        err = float(np.max(np.abs(nd[-1].numpy() - want)) / max(1.0, float(np.max(np.abs(want)))))
        f, nd = deployed_build(sch.mod, target, dev, rng)  # timed as MetaSchedule times it
        res = f.time_evaluator(
            "main", dev, number=args.number, repeat=args.repeat, min_repeat_ms=args.min_repeat_ms
        )(*nd)
        med = statistics.median(list(res.results))
        item = {
            "records": len(subset),
            "tuner_best_gflops": flops / best_cost / 1e9,
            "best_gflops": flops / med / 1e9,
            "rel_error": err,
            "cpu_gflops": None,
        }
        if args.threads == 1:
            main_fn = f["main"]
            cpu = cpu_times(lambda fn=main_fn, a=nd: fn(*a), args.repeat, args.min_repeat_ms)
            item["cpu_gflops"] = flops / statistics.median(cpu) / 1e9
        out[first] = item
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
