"""Plausibility checks of one parsed record: a value no measurement can produce is refused.

A log is data from disk (another version, another machine, a hand edit, an attacker): a
negative, zero, NaN or infinite cost, a non-numeric one, an unknown error code or sketch
index, or a shape no program can have would otherwise be read as a measurement — and a
forged 1e-30 s cost would be chosen as the best. ``check_record`` raises RecordError
naming the field; the readers skip the line with a warning naming the file and line.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import RecordError

# a kernel cannot finish below a picosecond, and no measurement waits a day
MIN_COST_S = 1e-12
MAX_COST_S = 86400.0
MAX_EXTENT = 2**31 - 1  # one dimension of a tensor
MAX_ELEMENTS = 2**40  # one tensor (4 TiB of float32)
MAX_SKETCHES = 10_000
ERROR_CODES = range(9)  # ErrorNo's values (TVM's numbering)
# a record line is a few KB; a longer one is a runaway or an attack
MAX_LINE_BYTES = 64 << 20


def _reject_constant(name: str) -> Any:
    raise RecordError(f"non-finite number {name} (a record holds finite numbers only)")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise RecordError(f"number {text[:40]} overflows a float (a record holds finite numbers)")
    return value


def parse_line(line: str) -> Any:
    """json.loads refusing NaN, Infinity and overflowing literals such as ``1e400``."""
    try:
        return json.loads(line, parse_constant=_reject_constant, parse_float=_parse_float)
    except RecursionError:
        raise RecordError("nested too deeply to be a record") from None
    except json.JSONDecodeError as err:
        raise RecordError(f"not JSON ({err.msg} at column {err.colno})") from None
    except RecordError:
        raise
    except ValueError as err:  # e.g. an integer longer than Python converts
        raise RecordError(f"not a readable JSON value ({str(err)[:80]})") from None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(rec: dict, name: str, default: float = 0.0, minimum: float = 0.0) -> float:
    v = rec.get(name, default)
    if not _is_number(v) or not math.isfinite(v) or v < minimum:
        raise RecordError(f"field {name!r} is {v!r}, not a finite number >= {minimum}")
    return float(v)


def _typed(rec: dict, name: str, kind: type) -> Any:
    if name not in rec:
        raise RecordError(f"field {name!r} is missing")
    v = rec[name]
    if not isinstance(v, kind):
        raise RecordError(f"field {name!r} is a {type(v).__name__}, not a {kind.__name__}")
    return v


def _check_extent(where: str, d: Any) -> int:
    if not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= MAX_EXTENT:
        raise RecordError(f"{where} has extent {d!r}, not an integer in 1..{MAX_EXTENT}")
    return d


def check_shapes(dag: dict) -> None:
    """Every tensor shape and loop extent of a DAG JSON is a plausible positive size."""
    ops = dag.get("ops")
    if not isinstance(ops, list):
        raise RecordError("field 'dag' has no list of ops")
    for op in ops:
        if not isinstance(op, dict):
            raise RecordError("field 'dag' has an op that is not an object")
        name = op.get("name", "?")
        if op.get("kind") == "placeholder":
            shape = op.get("shape")
            if not isinstance(shape, list):
                raise RecordError(f"placeholder {name!r} in 'dag' has no shape list")
            extents = [_check_extent(f"placeholder {name!r} in 'dag'", d) for d in shape]
        else:
            axes = op.get("axis", [])
            if not isinstance(axes, list) or not all(
                isinstance(a, list) and len(a) == 4 for a in axes
            ):
                raise RecordError(f"op {name!r} in 'dag' has malformed axes")
            extents = [_check_extent(f"op {name!r} in 'dag'", a[2]) for a in axes]
        if math.prod(extents) > MAX_ELEMENTS:
            raise RecordError(f"op {name!r} in 'dag' has {math.prod(extents)} elements")


def check_record(rec: Any) -> None:
    """Raise RecordError (naming the field) if ``rec`` is not a plausible version-1 record."""
    if not isinstance(rec, dict):
        raise RecordError(f"a JSON {type(rec).__name__}, not a record object")
    for name in ("workload_key", "structure_key", "target", "target_digest"):
        _typed(rec, name, str)
    for name in ("versions", "trace", "dag"):
        _typed(rec, name, dict)
    error_no = rec.get("error_no")
    if not isinstance(error_no, int) or isinstance(error_no, bool) or error_no not in ERROR_CODES:
        raise RecordError(f"field 'error_no' is {error_no!r}, not a known error code (0..8)")
    costs = _typed(rec, "costs", list)
    if not all(_is_number(c) for c in costs):
        raise RecordError(f"field 'costs' holds a non-number: {costs[:4]!r}")
    if error_no == 0:
        if not costs:
            raise RecordError("a successful measurement with no costs")
        bad = [c for c in costs if not MIN_COST_S <= c <= MAX_COST_S]
        if bad:
            raise RecordError(
                f"field 'costs' holds {bad[0]!r} s, not a time a kernel can take "
                f"({MIN_COST_S:g}..{MAX_COST_S:g} s)"
            )
    sketch = rec.get("sketch")
    if sketch is not None and (
        not isinstance(sketch, int) or isinstance(sketch, bool) or not 0 <= sketch < MAX_SKETCHES
    ):
        raise RecordError(f"field 'sketch' is {sketch!r}, not a sketch index")
    decisions = rec.get("decisions")
    if decisions is not None and not isinstance(decisions, list):
        raise RecordError(f"field 'decisions' is a {type(decisions).__name__}, not a list")
    if not isinstance(rec.get("error_msg", ""), str):
        raise RecordError("field 'error_msg' is not a string")
    if rec.get("timing", "measured") not in ("measured", "estimated"):
        raise RecordError(f"field 'timing' is {rec.get('timing')!r}, not 'measured'/'estimated'")
    for name in ("flop_ct", "all_cost", "timestamp"):
        _finite(rec, name)
    check_shapes(rec["dag"])
