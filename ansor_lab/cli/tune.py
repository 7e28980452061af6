"""``ansor-lab tune``: search a workload's programs, every measurement appended to a log."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from ..errors import CommandLineError
from .logs import fmt_seconds
from .workload import make_task, parse_args_json


def add_parser(sub: Any) -> None:
    """Declare ``tune`` and its options."""
    p = sub.add_parser(
        "tune",
        help="tune a workload (FILE.py:FUNC, MODULE:FUNC or a registered name) into a log",
        description="Search fast programs for a workload; every measured candidate is "
        "appended to --log as soon as it is measured. Progress goes to stderr.",
    )
    p.add_argument("workload", help="FILE.py:FUNC, MODULE:FUNC or a registered workload name")
    p.add_argument("--args", default=None, help="the function's arguments as a JSON list")
    p.add_argument("--target", default="llvm", help="target string (default llvm)")
    p.add_argument(
        "--trials",
        type=int,
        required=True,
        help="measurements in all (with --resume: the log's count toward it)",
    )
    p.add_argument("--log", required=True, help="JSON-lines records log to append to")
    p.add_argument("--resume", action="store_true", help="continue an existing log")
    p.add_argument(
        "--dask", metavar="ADDRESS", help="measure on a Dask cluster (scheduler address)"
    )
    p.add_argument("--per-round", type=int, default=64, help="candidates measured per round")
    p.add_argument(
        "--early-stopping", type=int, default=None, help="stop after N trials without progress"
    )
    p.add_argument("--seed", type=int, default=None, help="search seed (reproducible runs)")
    p.add_argument(
        "--check", action="store_true", help="check each candidate against the reference"
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a SketchPolicy parameter, e.g. --param population=16 (repeatable)",
    )
    p.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (it may register workloads)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_tune)


def _policy_params(items: list[str]) -> dict:
    from ..search.policy import DEFAULT_PARAMS

    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in DEFAULT_PARAMS:
            raise CommandLineError(
                f"--param {item!r}: write KEY=VALUE with KEY one of "
                + ", ".join(sorted(DEFAULT_PARAMS))
            )
        try:
            params[key] = type(DEFAULT_PARAMS[key])(json.loads(value))
        except (ValueError, TypeError):
            raise CommandLineError(f"--param {item!r}: {value!r} is not a number") from None
    return params


def dask_runner(address: str) -> tuple[Any, Any]:
    """(runner, builder or None) measuring on the Dask cluster at ``address``."""
    from .. import auto_scheduler

    runner_cls = getattr(auto_scheduler, "DaskRunner", None)
    if runner_cls is None:
        raise CommandLineError(
            "--dask needs auto_scheduler.DaskRunner, which this ansor_lab does not have; "
            "install the dask extra (pip install 'ansor_lab[dask]') with a version that "
            "provides it, or tune without --dask"
        )
    builder_cls = getattr(auto_scheduler, "DaskBuilder", None)
    return runner_cls(address), builder_cls(address) if builder_cls is not None else None


def _validate(args: argparse.Namespace) -> None:
    if args.trials < 1:
        raise CommandLineError(f"--trials {args.trials}: give at least 1 measurement")
    if args.per_round < 1:
        raise CommandLineError(f"--per-round {args.per_round}: give at least 1")
    if os.path.isdir(args.log):
        raise CommandLineError(f"--log {args.log!r} is a directory; give a file name")
    if not args.resume and os.path.exists(args.log) and os.path.getsize(args.log) > 0:
        raise CommandLineError(
            f"--log {args.log!r} already holds records; pass --resume to continue it, "
            "or choose another --log"
        )


def cmd_tune(args: argparse.Namespace) -> int:
    """Tune; exit 0 when at least one program was measured successfully, else 1."""
    from ..measure.records import RecordToFile, load_records
    from ..search.policy import PreloadMeasuredStates, SketchPolicy
    from ..search.task import TuningOptions

    _validate(args)
    fn_args = parse_args_json(args.args)
    params = _policy_params(args.param)
    runner, builder = dask_runner(args.dask) if args.dask else ("local", None)
    task = make_task(args.workload, fn_args, args.target, args.imports)
    done = 0
    init = []
    if args.resume and os.path.exists(args.log):
        done = sum(1 for inp, _ in load_records(args.log) if inp.workload_key == task.workload_key)
        init.append(PreloadMeasuredStates(args.log))
    policy = SketchPolicy(
        task, params=params, seed=args.seed, verbose=0, init_search_callbacks=init
    )
    left = max(0, args.trials - done)
    options = TuningOptions(
        num_measure_trials=left,
        early_stopping=args.early_stopping,
        num_measures_per_round=min(args.per_round, max(1, left)),
        verbose=0 if args.quiet or not left else 1,
        runner=runner,
        builder=builder or "local",
        measure_callbacks=[RecordToFile(args.log)],
        check_correctness=args.check,
    )
    result = task.tune(options, policy) if left else None
    stats = result.stats if result is not None else None
    best = policy.best_cost
    summary = {
        "workload_key": task.workload_key,
        "target": str(task.target),
        "log": args.log,
        "resumed_from": done,
        "trials": stats.trials if stats else 0,
        "errors": stats.errors if stats else 0,
        "best_cost": best if math.isfinite(best) else None,
        "best_gflops": task.flop_ct / best / 1e9 if math.isfinite(best) and best > 0 else None,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"workload   {summary['workload_key']} on {summary['target']}")
        print(
            f"trials     {summary['trials']} measured now ({summary['errors']} errors), "
            f"{done} already in the log"
        )
        if summary["best_cost"] is None:
            print("best       none: no program was measured successfully")
        else:
            print(
                f"best       {fmt_seconds(summary['best_cost'])}, "
                f"{summary['best_gflops']:.2f} GFLOPS (log: {args.log})"
            )
    if summary["best_cost"] is None:
        print(
            "ansor-lab tune: no program measured successfully; see `ansor-lab show "
            f"{args.log}` for the errors",
            file=sys.stderr,
        )
        return 1
    return 0
