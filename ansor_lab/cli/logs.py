"""``ansor-lab show``, ``distill`` and ``merge``: reading and rewriting records logs."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

from ..errors import CommandLineError

#: eight heights of a text curve
BARS = "▁▂▃▄▅▆▇█"


def add_parsers(sub: Any) -> None:
    """Declare ``show``, ``distill`` and ``merge``."""
    p = sub.add_parser("show", help="best program per workload, error counts, a text curve")
    p.add_argument("log", help="JSON-lines records log")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("distill", help="keep only the best record per workload and target")
    p.add_argument("log", help="JSON-lines records log")
    p.add_argument("-o", "--output", required=True, help="the log to write")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_distill)
    p = sub.add_parser("merge", help="join the valid records of several logs")
    p.add_argument("logs", nargs="+", help="JSON-lines records logs")
    p.add_argument("-o", "--output", required=True, help="the log to write")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_merge)


def fmt_seconds(t: float) -> str:
    """A time in the unit that reads best (s, ms or us)."""
    if t >= 1.0:
        return f"{t:.3f} s"
    return f"{t * 1e3:.4f} ms" if t >= 1e-3 else f"{t * 1e6:.3f} us"


def check_log(path: str) -> None:
    """Refuse a missing log, a directory or an unreadable file with what to give instead."""
    if os.path.isdir(path):
        raise CommandLineError(f"{path!r} is a directory; give a records log file (JSON lines)")
    if not os.path.exists(path):
        raise CommandLineError(f"no such log {path!r}; give the file `ansor-lab tune --log` wrote")
    if not os.access(path, os.R_OK):
        raise CommandLineError(f"cannot read {path!r}; check its permissions")


def read_log(path: str) -> list:
    """The valid (RecordInput, MeasureResult) pairs of a log; an empty log is an error."""
    from ..measure.records import load_records

    check_log(path)
    records = list(load_records(path))
    if not records:
        raise CommandLineError(
            f"{path!r} holds no valid records; tune into it first (`ansor-lab tune ... --log "
            f"{path}`)"
        )
    return records


def record_dict(inp: Any, res: Any) -> dict:
    """A record back as the JSON object of its log line (for distilled and exported copies)."""
    return {
        "v": 1,
        "workload_key": inp.workload_key,
        "structure_key": inp.structure_key,
        "target": inp.target,
        "target_digest": inp.target_digest,
        "versions": inp.versions,
        "flop_ct": inp.flop_ct,
        "dag": inp.dag,
        "sketch": inp.sketch,
        "decisions": inp.decisions,
        "trace": inp.trace,
        "costs": list(res.costs),
        "error_no": int(res.error_no),
        "error_msg": res.error_msg,
        "all_cost": res.all_cost,
        "timestamp": res.timestamp,
        **({"timing": "estimated"} if getattr(res, "estimated", False) else {}),
    }


def group(records: list) -> dict[tuple[str, str], list]:
    """Records by (workload key, target), in log order."""
    out: dict[tuple[str, str], list] = {}
    for inp, res in records:
        out.setdefault((inp.workload_key, inp.target), []).append((inp, res))
    return out


def best_of(records: list, estimated: bool | None = None) -> tuple | None:
    """The fastest successful record of a list (of one timing kind when given), or None."""
    ok = [
        (inp, res)
        for inp, res in records
        if res.error_no == 0 and res.costs and estimated in (None, res.estimated)
    ]
    return min(ok, key=lambda r: r[1].mean_cost) if ok else None


def timing_counts(records: list) -> dict[str, int]:
    """How many successful records were measured and how many estimated."""
    counts: dict[str, int] = {}
    for _, res in records:
        if res.error_no == 0:
            kind = "estimated" if res.estimated else "measured"
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def curve(values: list[float], width: int = 40) -> str:
    """A one-line text curve of best-so-far GFLOPS, one bar per bucket of trials."""
    if not values:
        return ""
    step = max(1, math.ceil(len(values) / width))
    points = [values[min(len(values) - 1, i + step - 1)] for i in range(0, len(values), step)]
    top = max(points) or 1.0
    return "".join(BARS[min(7, int(p / top * 7.999))] if p > 0 else " " for p in points)


def summarize(records: list) -> list[dict]:
    """Per (workload, target): counts, errors by kind, best cost/GFLOPS, best-so-far curve."""
    rows = []
    for (key, target), recs in group(records).items():
        errors: dict[str, int] = {}
        best_so_far, best = [], math.inf
        flop = recs[0][0].flop_ct
        for _, res in recs:
            if res.error_no != 0:
                errors[res.error_kind] = errors.get(res.error_kind, 0) + 1
            elif res.costs:
                best = min(best, res.mean_cost)
            best_so_far.append(flop / best / 1e9 if math.isfinite(best) and best > 0 else 0.0)
        kinds = timing_counts(recs)
        # an estimate is never the best over a measurement: a mixed log shows the measured
        found = best_of(recs, False if "measured" in kinds else None)
        if found is not None and len(kinds) > 1:
            best_so_far[-1] = flop / found[1].mean_cost / 1e9
        rows.append(
            {
                "workload_key": key,
                "target": target,
                "records": len(recs),
                "errors": errors,
                "best_cost": found[1].mean_cost if found else None,
                "best_gflops": best_so_far[-1] if found else None,
                "flop_ct": flop,
                "curve_gflops": best_so_far,
                "timing": "mixed" if len(kinds) > 1 else next(iter(kinds), "measured"),
                "timing_counts": kinds,
            }
        )
    return rows


def cmd_show(args: argparse.Namespace) -> int:
    """Print the best program per workload; exit 1 when a workload has no working program."""
    rows = summarize(read_log(args.log))
    if args.json:
        print(json.dumps({"log": args.log, "workloads": rows}))
    else:
        for n, row in enumerate(rows, 1):
            print(f"[{n}] {row['workload_key']}  on {row['target']}")
            errs = ", ".join(f"{k} {v}" for k, v in sorted(row["errors"].items())) or "none"
            print(f"    records {row['records']}, errors: {errs}")
            if row["best_cost"] is None:
                print("    best    none: every measurement failed")
            else:
                how = {
                    "estimated": " (estimated: the GPU model's time, checked on the emulator; "
                    "not measured)",
                    "mixed": " (of the measured records)",
                }.get(row["timing"], "")
                print(
                    f"    best    {row['best_cost'] * 1e3:.4f} ms, "
                    f"{row['best_gflops']:.2f} GFLOPS{how}"
                )
                if row["timing"] == "mixed":
                    c = row["timing_counts"]
                    print(
                        f"    timing  MIXED: {c['measured']} measured and {c['estimated']} "
                        "estimated records, not comparable; split them with "
                        "auto_scheduler.filter_records(log, new_log, estimated=...)"
                    )
                print(f"    curve   |{curve(row['curve_gflops'])}| best-so-far GFLOPS by trial")
    return 0 if all(r["best_cost"] is not None for r in rows) else 1


def _check_output(path: str, inputs: list[str]) -> None:
    if os.path.isdir(path):
        raise CommandLineError(f"-o {path!r} is a directory; give a file name")
    for src in inputs:
        if os.path.exists(path) and os.path.samefile(src, path):
            raise CommandLineError(f"-o {path!r} is also an input; write to another file")


def cmd_distill(args: argparse.Namespace) -> int:
    """Write the best record of each (workload, target) of a log to ``-o``."""
    records = read_log(args.log)
    _check_output(args.output, [args.log])
    kept = [  # the best of each timing kind: an estimate never replaces a measurement
        b
        for recs in group(records).values()
        for kind in (False, True)
        if (b := best_of(recs, kind)) is not None
    ]
    with open(args.output, "w") as f:
        for inp, res in kept:
            f.write(json.dumps(record_dict(inp, res), separators=(",", ":")) + "\n")
    if args.json:
        print(json.dumps({"read": len(records), "written": len(kept), "output": args.output}))
    else:
        print(f"{args.output}: {len(kept)} best records of {len(records)} read")
    return 0 if kept else 1


def cmd_merge(args: argparse.Namespace) -> int:
    """Append the valid records of every input log into ``-o`` (created afresh)."""
    from ..measure.records import merge_records

    for path in args.logs:
        check_log(path)
    _check_output(args.output, args.logs)
    if os.path.exists(args.output):
        os.remove(args.output)  # merge_records appends; -o is written afresh
    n = merge_records(list(args.logs), args.output)
    if args.json:
        print(json.dumps({"inputs": list(args.logs), "written": n, "output": args.output}))
    else:
        print(f"{args.output}: {n} records from {len(args.logs)} logs")
    return 0
