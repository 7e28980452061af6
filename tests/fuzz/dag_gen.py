"""Random compute DAGs for the search fuzzer, and the check one DAG's search must pass.

``random_dag(seed)`` builds a small DAG the way TE users write them: chains and trees of
reductions (sum / max / min, over the last axis, the first axis or two axes; squared
sums; a matmul), elementwise and broadcast ops (a row or a column of statistics applied
to a matrix), tensors with several consumers, several outputs, and extents that are odd
or prime. A few seeds are patterns users write every day (layer norm with its two sums,
softmax, RMS norm). ``topi_cases()`` (``dag_topi.py``) is every ``topi`` operator at an
odd shape.

``check_search(case)`` is what the search owes every DAG: at least one sketch, a valid
initial population, mutations and crossovers that never raise, and programs (one per
sketch, up to ``programs``) that lower, build and equal the numpy reference; with
``tune_trials`` a short measured tune whose best program equals the reference too.

A failure names the seed: ``check_search(random_dag(SEED), programs=8)`` reproduces it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from workloads import FAST_PARAMS, fast_options, make_task

import ansor_lab as tvm
from ansor_lab import auto_scheduler, errors, te
from ansor_lab.dsl.reference import evaluate

#: Extents drawn for the DAGs' axes: odd, prime, one, and a few vector-friendly ones.
EXTENTS = (1, 2, 3, 5, 7, 9, 11, 13, 16, 17, 19, 23, 29, 31, 37, 48, 64)
#: Long rows now and then (a reduction of >= 256 over a short spatial extent is rfactored).
LONG_EXTENTS = (127, 257, 300, 768)


@dataclass
class DagCase:
    """A DAG to search: its tensors (inputs first, outputs last) and how to check it."""

    name: str
    args: list
    low: float = -1.0
    high: float = 1.0

    @property
    def inputs(self) -> list:
        """The placeholders."""
        return [t for t in self.args if isinstance(t.op, te.PlaceholderOp)]

    @property
    def outputs(self) -> list:
        """The computed arguments."""
        return [t for t in self.args if not isinstance(t.op, te.PlaceholderOp)]


class _Builder:
    """The state of one random DAG under construction."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.inputs: list = []
        self.pool: list = []  # every tensor so far (inputs and computed)
        self.n = 0

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def placeholder(self, shape: tuple) -> te.Tensor:
        t = te.placeholder(shape, name=self.name("in"))
        self.inputs.append(t)
        self.pool.append(t)
        return t

    def add(self, t: te.Tensor) -> te.Tensor:
        self.pool.append(t)
        return t

    def pick(self, min_rank: int = 1) -> te.Tensor:
        cands = [t for t in self.pool if len(t.shape) >= min_rank]
        if not cands:
            return self.placeholder(self.shape(min_rank))
        # later tensors are likelier: chains grow long, and early tensors still get
        # several consumers now and then
        weights = [1 + k for k in range(len(cands))]
        return self.rng.choices(cands, weights=weights)[0]

    def same_shape(self, shape: tuple) -> te.Tensor:
        cands = [t for t in self.pool if tuple(t.shape) == tuple(shape)]
        if cands and self.rng.random() < 0.7:
            return self.rng.choice(cands)
        return self.placeholder(shape)

    # -- the op kinds ---------------------------------------------------------------
    def unary(self) -> te.Tensor:
        t = self.pick()
        kind = self.rng.choice(["tanh", "sigmoid", "relu", "affine", "abs", "exp_tanh", "sq"])

        def f(v):
            if kind == "tanh":
                return te.tanh(v)
            if kind == "sigmoid":
                return te.sigmoid(v)
            if kind == "relu":
                return te.max(v, te.const(0.0, "float32"))
            if kind == "affine":
                return v * 0.5 + 0.25
            if kind == "abs":
                return te.abs(v)
            if kind == "exp_tanh":
                return te.exp(te.tanh(v))
            return v * v * 0.5

        return self.add(te.compute(t.shape, lambda *i: f(t[i]), name=self.name(kind)))

    def binary(self) -> te.Tensor:
        a = self.pick()
        b = self.same_shape(tuple(a.shape))
        kind = self.rng.choice(["add", "mul", "sub", "max", "div"])

        def f(x, y):
            if kind == "add":
                return x + y
            if kind == "mul":
                return x * y
            if kind == "sub":
                return x - y
            if kind == "max":
                return te.max(x, y)
            return x / (te.abs(y) + 1.0)

        return self.add(te.compute(a.shape, lambda *i: f(a[i], b[i]), name=self.name(kind)))

    def broadcast(self) -> te.Tensor:
        a = self.pick(min_rank=2)
        row = self.rng.random() < 0.5  # a statistic per row (shape[:-1]) or per column
        shape = tuple(a.shape[:-1]) if row else tuple(a.shape[-1:])
        s = self.same_shape(shape)
        if row:
            body = lambda *i: (a[i] - s[i[:-1]]) * 0.5  # noqa: E731 - one-line body
        else:
            body = lambda *i: a[i] * s[i[-1:]] + s[i[-1:]]  # noqa: E731
        return self.add(te.compute(a.shape, body, name=self.name("bcast")))

    def reduce(self) -> te.Tensor:
        a = self.pick()
        rank = len(a.shape)
        where = self.rng.choice(["last", "first", "two"]) if rank >= 2 else "last"
        if where == "two" and rank < 3:
            where = "last"
        op = self.rng.choice(["sum", "sum", "sumsq", "max", "min"])
        red = {"last": [rank - 1], "first": [0], "two": [rank - 2, rank - 1]}[where]
        ks = [te.reduce_axis((0, a.shape[d]), name=self.name("k")) for d in red]
        keep = [d for d in range(rank) if d not in red]
        shape = tuple(a.shape[d] for d in keep) or (1,)

        def body(*i):
            idx, it_k, it_s = [], iter(ks), iter(i if keep else ())
            for d in range(rank):
                idx.append(next(it_k) if d in red else next(it_s))
            v = a[tuple(idx)]
            if op in ("sum", "sumsq"):
                return te.sum(v * v if op == "sumsq" else v, axis=ks)
            return (te.max if op == "max" else te.min)(v, axis=ks)

        return self.add(te.compute(shape, body, name=self.name(op)))

    def matmul(self) -> te.Tensor:
        cands = [t for t in self.pool if len(t.shape) == 2]
        a = self.rng.choice(cands) if cands else self.placeholder(self.shape(2))
        k_ext, m = a.shape[1], self.rng.choice(EXTENTS)
        w = self.placeholder((k_ext, m))
        k = te.reduce_axis((0, k_ext), name=self.name("k"))
        return self.add(
            te.compute(
                (a.shape[0], m),
                lambda i, j: te.sum(a[i, k] * w[k, j], axis=k),
                name=self.name("mm"),
            )
        )

    def shape(self, rank: int) -> tuple:
        dims = [self.rng.choice(EXTENTS) for _ in range(rank)]
        if rank <= 2 and self.rng.random() < 0.15:  # a long row: rfactor and tiling rules
            dims[-1] = self.rng.choice(LONG_EXTENTS)
        return tuple(dims)


KINDS = ("unary", "binary", "broadcast", "reduce", "reduce", "matmul")


def random_dag(seed: int) -> DagCase:
    """A random DAG (deterministic in ``seed``); seeds 0, 1, 2 (mod 23) are layer norm,
    softmax and RMS norm at random shapes."""
    rng = random.Random(seed)
    if seed % 23 < 3:
        rows, cols = rng.choice(EXTENTS), rng.choice(EXTENTS[1:])
        return (layer_norm, softmax, rms_norm)[seed % 23](rows, cols, f"s{seed}_")
    b = _Builder(rng)
    b.placeholder(b.shape(rng.choice([1, 2, 2, 2, 3])))
    for _ in range(rng.randint(2, 6)):
        getattr(b, rng.choice(KINDS))()
    computed = [t for t in b.pool if not isinstance(t.op, te.PlaceholderOp)]
    outs = [computed[-1]]
    for t in computed[:-1]:  # several outputs now and then
        if rng.random() < 0.2:
            outs.insert(0, t)
    return DagCase(f"dag{seed}", _used_inputs(b.inputs, outs) + outs)


def _used_inputs(inputs: list, outs: list) -> list:
    """The placeholders the outputs read (an unused one is no argument of the DAG)."""
    seen: set = set()
    todo = list(outs)
    while todo:
        t = todo.pop()
        if t.op.name in seen:
            continue
        seen.add(t.op.name)
        todo.extend(getattr(t.op, "input_tensors", []))
    return [t for t in inputs if t.op.name in seen]


# -- the patterns users write ----------------------------------------------------------


def layer_norm(rows: int = 4, cols: int = 768, prefix: str = "") -> DagCase:
    """Layer norm as TE users write it (issue 21): sum1 -> mean, sum2 = sum(x*x) ->
    rstd = rsqrt(sum2/n - mean^2 + eps) -> out = (x - mean) * rstd * g + b."""
    x = te.placeholder((rows, cols), name="x")
    g = te.placeholder((cols,), name="g")
    b = te.placeholder((cols,), name="b")
    k1 = te.reduce_axis((0, cols), name="k1")
    s1 = te.compute((rows,), lambda i: te.sum(x[i, k1], axis=k1), name="sum1")
    mean = te.compute((rows,), lambda i: s1[i] / cols, name="mean")
    k2 = te.reduce_axis((0, cols), name="k2")
    s2 = te.compute((rows,), lambda i: te.sum(x[i, k2] * x[i, k2], axis=k2), name="sum2")
    rstd = te.compute(
        (rows,), lambda i: te.rsqrt(s2[i] / cols - mean[i] * mean[i] + 1e-5), name="rstd"
    )
    out = te.compute(
        (rows, cols), lambda i, j: (x[i, j] - mean[i]) * rstd[i] * g[j] + b[j], name="out"
    )
    return DagCase(f"{prefix}layer_norm_{rows}x{cols}", [x, g, b, out])


def softmax(rows: int = 4, cols: int = 512, prefix: str = "") -> DagCase:
    """Row softmax: max, exp-sum, normalize."""
    x = te.placeholder((rows, cols), name="x")
    k1 = te.reduce_axis((0, cols), name="k1")
    mx = te.compute((rows,), lambda i: te.max(x[i, k1], axis=k1), name="rowmax")
    ex = te.compute((rows, cols), lambda i, j: te.exp(x[i, j] - mx[i]), name="expv")
    k2 = te.reduce_axis((0, cols), name="k2")
    sm = te.compute((rows,), lambda i: te.sum(ex[i, k2], axis=k2), name="rowsum")
    out = te.compute((rows, cols), lambda i, j: ex[i, j] / sm[i], name="softmax")
    return DagCase(f"{prefix}softmax_{rows}x{cols}", [x, out], -3.0, 3.0)


def rms_norm(rows: int = 4, cols: int = 768, prefix: str = "") -> DagCase:
    """RMS norm: out = x * rsqrt(mean(x^2) + eps) * g."""
    x = te.placeholder((rows, cols), name="x")
    g = te.placeholder((cols,), name="g")
    k = te.reduce_axis((0, cols), name="k")
    ss = te.compute((rows,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="sumsq")
    out = te.compute(
        (rows, cols), lambda i, j: x[i, j] * te.rsqrt(ss[i] / cols + 1e-5) * g[j], name="out"
    )
    return DagCase(f"{prefix}rms_norm_{rows}x{cols}", [x, g, out])


# -- the check ---------------------------------------------------------------------------


def inputs_of(case: DagCase, seed: int = 0) -> list[np.ndarray]:
    """Random inputs for the DAG's placeholders (floats in [low, high), small ints)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in case.inputs:
        if t.dtype.startswith("float"):
            out.append(rng.uniform(case.low, case.high, size=t.shape).astype(t.dtype))
        else:
            out.append(rng.integers(-4, 5, size=t.shape).astype(t.dtype))
    return out


def reference(case: DagCase, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The numpy reference of every output."""
    values = evaluate(case.outputs, dict(zip(case.inputs, inputs)))
    return [values[t] for t in case.outputs]


def run_program(case: DagCase, mod, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Build ``mod`` and run it; outputs start as NaN so an unwritten element shows."""
    f = tvm.build(mod, target="llvm")
    it = iter(inputs)
    arrays, outs = [], []
    for t in case.args:
        if isinstance(t.op, te.PlaceholderOp):
            arrays.append(next(it).copy())
        else:
            fill = np.nan if t.dtype.startswith("float") else -123456789
            arrays.append(np.full(t.shape, fill, dtype=t.dtype))
            outs.append(arrays[-1])
    f(*arrays)
    return outs


def assert_equal_reference(case: DagCase, got: list, want: list, what: str) -> None:
    """Each output close to the reference: rtol 1e-3 and an atol relative to the largest
    value (sums of dozens of terms are reassociated by a tiled or rfactored program)."""
    for t, g, w in zip(case.outputs, got, want):
        if t.dtype.startswith("int"):
            bad = g != w
        else:
            scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 1.0
            bad = ~np.isclose(g, w, rtol=1e-3, atol=1e-4 * max(1.0, scale), equal_nan=True)
        if bad.any():
            idx = tuple(int(x) for x in np.argwhere(bad)[0])
            raise AssertionError(
                f"{case.name}: {what}: output {t.name} differs at {int(bad.sum())} of "
                f"{bad.size} elements; first at {idx}: got {g[idx]}, want {w[idx]}"
            )


def _ours(reason: str) -> bool:
    """Whether a drop reason (``"<where>: <ErrorClass>"``) names one of the library's
    refusals (ScheduleError, LoweringError...), not a crash of a rule or a sampler."""
    name = reason.rsplit(": ", 1)[-1]
    cls = getattr(errors, name, None)
    return isinstance(cls, type) and issubclass(cls, errors.AnsorLabError)


def check_search(
    case: DagCase, programs: int = 2, tune_trials: int = 0, seed: int = 0, log: str | None = None
) -> dict:
    """Run the search's phases on ``case`` and check each (see the module docstring).

    Returns counts: sketches, population, programs checked, invalid candidates dropped.
    """
    task = make_task(case.args)
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=seed, verbose=0)
    assert policy.sketches, f"{case.name}: no sketch"
    pop = policy.sample_initial_population(8)
    assert pop, f"{case.name}: no valid initial candidate (dropped: {dict(policy.invalid)})"
    children = []
    for c in pop[:4]:  # evolution's moves drop what does not fit, never raise
        for child in (policy.space.mutate(c), policy.space.crossover(c, pop[-1])):
            if child is not None and policy.features_of(child) is not None:
                children.append(child)
    bugs = [k for k in [*policy.invalid, *policy.dropped_sketches] if not _ours(k)]
    assert not bugs, f"{case.name}: candidates dropped on errors that are bugs: {bugs}"
    inputs = inputs_of(case, seed)
    want = reference(case, inputs)
    chosen, sketches_seen = children[:1], set()
    for c in pop:  # one program per sketch first: each sketch's structure gets built
        if c.sketch not in sketches_seen and len(chosen) <= programs:
            chosen.append(c)
            sketches_seen.add(c.sketch)
    for c in chosen:
        sch = policy.space.schedule(c)
        got = run_program(case, sch.mod, inputs)
        assert_equal_reference(case, got, want, f"sketch {c.sketch} ({c.decisions})")
    if tune_trials:
        opts = fast_options(log, tune_trials, tune_trials)
        result = task.tune(opts, search_policy=policy)
        assert result.best_trace is not None, f"{case.name}: no program measured"
        if log is not None:
            wrong = [
                r.error_msg[:300]
                for _, r in auto_scheduler.load_records(log)
                if r.error_kind == "WRONG_ANSWER"
            ]
            assert not wrong, f"{case.name}: measured programs differ: {wrong}"
        sch, _ = result.apply_best()
        got = run_program(case, sch.mod, inputs)
        assert_equal_reference(case, got, want, "best tuned program")
    return {
        "sketches": len(policy.sketches),
        "population": len(pop),
        "programs": len(chosen),
        "invalid": policy.invalid_candidates,
    }
