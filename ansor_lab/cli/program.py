"""``ansor-lab export`` (a best program as a script) and ``replay`` (a trace on its workload)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

from ..errors import AnsorLabError, CommandLineError
from ..measure.timing import mix_message
from .logs import best_of, check_log, fmt_seconds, group, read_log, record_dict, timing_counts


def add_parsers(sub: Any) -> None:
    """Declare ``export`` and ``replay``."""
    p = sub.add_parser("export", help="the best program of a log as a .py script and a .json")
    p.add_argument("log", help="JSON-lines records log")
    p.add_argument("-o", "--output", required=True, help="the script to write (e.g. best.py)")
    p.add_argument("--workload", help="which workload (part of its key, or its number in show)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("replay", help="apply a trace to its workload: IR, source, time, check")
    p.add_argument("trace", help="a record or exported .json (with its workload's DAG)")
    p.add_argument("--target", help="build for this target (default: the record's)")
    p.add_argument("--number", type=int, default=10, help="runs per measurement")
    p.add_argument("--repeat", type=int, default=3, help="measurements (mean taken)")
    p.add_argument("--no-source", action="store_true", help="do not print the LLVM IR")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_replay)


def choose(records: list, which: str | None) -> tuple:
    """The best record of the workload ``which`` names (any, when the log holds one)."""
    groups = list(group(records).items())
    if which is not None:
        if which.isdigit() and 1 <= int(which) <= len(groups):
            groups = [groups[int(which) - 1]]
        else:
            groups = [g for g in groups if which in g[0][0]]
    names = "; ".join(f"[{n}] {k}" for n, ((k, _), _) in enumerate(group(records).items(), 1))
    if not groups:
        raise CommandLineError(f"--workload {which!r} matches none of the log's: {names}")
    if len(groups) > 1:
        raise CommandLineError(
            f"the log holds {len(groups)} workloads; pick one with --workload (a number or "
            f"part of the key): {names}"
        )
    kinds = timing_counts(groups[0][1])
    if len(kinds) > 1:
        raise CommandLineError(mix_message(groups[0][0][0], kinds, "the log", "export"))
    best = best_of(groups[0][1])
    if best is None:
        raise CommandLineError(
            f"every measurement of {groups[0][0][0]} failed: there is no program to export"
        )
    return best


def cmd_export(args: argparse.Namespace) -> int:
    """Write ``-o`` (a script that rebuilds, checks and times the best program) and its .json."""
    from .. import __version__
    from ..measure.workers import rebuild_schedule
    from .script_template import render

    inp, res = choose(read_log(args.log), args.workload)
    stem, ext = os.path.splitext(args.output)
    if ext != ".py":
        raise CommandLineError(f"-o {args.output!r}: give a .py file name, e.g. -o best.py")
    sidecar = stem + ".json"
    record = record_dict(inp, res)
    trace_python = str(rebuild_schedule(inp.dag, inp.trace).trace)
    text = render(record, trace_python, args.log, __version__)
    with open(args.output, "w") as f:
        f.write(text)
    with open(sidecar, "w") as f:
        json.dump(record, f)
        f.write("\n")
    gflops = inp.flop_ct / res.mean_cost / 1e9
    if args.json:
        out = {"script": args.output, "json": sidecar, "workload_key": inp.workload_key}
        print(json.dumps({**out, "best_cost": res.mean_cost, "best_gflops": gflops}))
    else:
        print(f"{args.output}: the best program of {inp.workload_key} ({gflops:.2f} GFLOPS)")
        print(f"{sidecar}: its record (replay it with `ansor-lab replay {sidecar}`)")
    return 0


def read_trace_file(path: str) -> dict:
    """A record-shaped JSON object (with ``dag`` and ``trace``) from ``path``."""
    check_log(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (ValueError, RecursionError) as err:
        raise CommandLineError(
            f"{path!r} is not one JSON object ({str(err)[:120]}); give a record, e.g. the "
            "best.json `ansor-lab export` writes (a whole log: use `ansor-lab export LOG`)"
        ) from None
    if not isinstance(data, dict) or "dag" not in data or "trace" not in data:
        raise CommandLineError(
            f"{path!r} holds no workload (it needs the 'dag' and 'trace' of a record); "
            "export one with `ansor-lab export LOG -o best.py`, which writes best.json"
        )
    return data


def check_and_time(sch: Any, args: list, target: Any, number: int, repeat: int) -> dict:
    """Build ``sch``, compare each output with the reference, time it."""
    from ..dsl.reference import reference_outputs
    from ..dsl.tensor import PlaceholderOp
    from ..measure.workers import random_inputs
    from ..runtime.build import build

    func = build(sch.mod, target=target)
    arrays = random_inputs([(t.name, list(t.shape), t.dtype) for t in args])
    expected = reference_outputs(args, arrays)
    func(*arrays)
    errors = {}
    ok = True
    for t, got, want in zip(args, arrays, expected):
        if isinstance(t.op, PlaceholderOp):
            continue
        err = float(np.max(np.abs(got.astype("float64") - want.astype("float64")), initial=0.0))
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        tol = 1e-3 if got.dtype.kind == "f" else 0.0
        errors[t.name] = err
        ok = ok and err <= tol * scale
    cost = func.time_evaluator(number=number, repeat=repeat, min_repeat_ms=50)(*arrays).mean
    return {"ok": ok, "max_abs_error": errors, "cost": cost, "module": func}


def cmd_replay(args: argparse.Namespace) -> int:
    """Print the IR and source of a record's program, check it, time it; 1 on a mismatch."""
    from ..dsl.serialize import dag_from_json
    from ..measure.workers import rebuild_schedule

    if args.number < 1 or args.repeat < 1:
        raise CommandLineError("--number and --repeat must be at least 1")
    data = read_trace_file(args.trace)
    target = args.target or data.get("target") or "llvm"
    try:
        sch = rebuild_schedule(data["dag"], data["trace"])
        tensors = dag_from_json(data["dag"])
    except AnsorLabError as err:
        raise CommandLineError(f"{args.trace!r} does not replay: {err}") from None
    except (KeyError, TypeError, ValueError, RecursionError) as err:
        raise CommandLineError(
            f"{args.trace!r} is malformed ({type(err).__name__}: {str(err)[:120]}); "
            "give a record written by ansor_lab (e.g. by `ansor-lab export`)"
        ) from None
    result = check_and_time(sch, tensors, target, args.number, args.repeat)
    flop = data.get("flop_ct") or 0.0
    gflops = flop / result["cost"] / 1e9 if flop else None
    if args.json:
        out = {k: v for k, v in result.items() if k != "module"}
        print(
            json.dumps(
                {
                    "workload_key": data.get("workload_key"),
                    "target": str(target),
                    **out,
                    "gflops": gflops,
                }
            )
        )
    else:
        print(sch.mod.script())
        if not args.no_source:
            print(result["module"].get_source("ll"))
        for name, err in result["max_abs_error"].items():
            print(f"{name}: max abs error {err:.3g} vs the reference", file=sys.stderr)
        speed = f", {gflops:.2f} GFLOPS" if gflops else ""
        verdict = "OK" if result["ok"] else "MISMATCH"
        print(f"check {verdict}; time {fmt_seconds(result['cost'])}{speed} on {target}")
    return 0 if result["ok"] else 1
