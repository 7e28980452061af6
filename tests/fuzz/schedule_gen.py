"""The random schedule generator of the schedule fuzzer.

A ``Fuzzer`` applies random block-style steps to a ``tir.Schedule``. Its choices come
from a ``Chooser``: ``HypothesisChooser`` draws them from hypothesis (the tests: shrinkable,
deterministic) and ``RandomChooser`` from ``random.Random`` (``bench/`` and quick scripts
that run many schedules without hypothesis). Each schedule call goes through
``Fuzzer.call``, which checks that a call raising ScheduleError changed nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ansor_lab import tir
from ansor_lab.errors import ScheduleError


class Chooser:
    """Where the fuzzer's random choices come from."""

    def choice(self, seq: Sequence, label: str = "") -> object:
        """One element of ``seq``."""
        raise NotImplementedError

    def integer(self, lo: int, hi: int, label: str = "") -> int:
        """An int in [lo, hi]."""
        raise NotImplementedError

    def boolean(self, label: str = "") -> bool:
        """True or False."""
        return bool(self.integer(0, 1, label))

    def permutation(self, seq: Sequence, label: str = "") -> list:
        """``seq`` in a random order."""
        raise NotImplementedError

    def subset(self, seq: Sequence, min_size: int, label: str = "") -> list:
        """At least ``min_size`` distinct elements of ``seq``, in ``seq``'s order."""
        picked = [x for x in seq if self.boolean(label)]
        for x in seq:
            if len(picked) >= min_size:
                break
            if x not in picked:
                picked.append(x)
        return [x for x in seq if x in picked]


class RandomChooser(Chooser):
    """Choices from ``random.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choice(self, seq: Sequence, label: str = "") -> object:
        """One element of ``seq``."""
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int, label: str = "") -> int:
        """An int in [lo, hi]."""
        return self.rng.randint(lo, hi)

    def permutation(self, seq: Sequence, label: str = "") -> list:
        """``seq`` in a random order."""
        out = list(seq)
        self.rng.shuffle(out)
        return out


class HypothesisChooser(Chooser):
    """Choices drawn from a hypothesis ``st.data()`` object (labelled in failure reports)."""

    def __init__(self, data: object) -> None:
        self.data = data

    def choice(self, seq: Sequence, label: str = "") -> object:
        """One element of ``seq``."""
        from hypothesis import strategies as st

        return self.data.draw(st.sampled_from(list(seq)), label=label or None)

    def integer(self, lo: int, hi: int, label: str = "") -> int:
        """An int in [lo, hi]."""
        from hypothesis import strategies as st

        return self.data.draw(st.integers(lo, hi), label=label or None)

    def permutation(self, seq: Sequence, label: str = "") -> list:
        """``seq`` in a random order."""
        from hypothesis import strategies as st

        return self.data.draw(st.permutations(list(seq)), label=label or None)


def fingerprint(sch: tir.Schedule) -> tuple:
    """Everything a step may change: every stage's schedule, and the trace."""
    stages = tuple(
        (
            s.block,
            s.op.name,
            s.root,
            tuple(s.leaves),
            tuple(s.relations),
            s.attach,
            tuple(sorted(s.annotations.items())),
            repr(sorted(s.pragmas.items())),
            s.scope,
            tuple(sorted(s.storage_align.items())),
            s.init_at,
            tuple(sorted(s.iters.items())),
            s.layout,
        )
        for s in sch.state.stages.values()
    )
    return stages, tuple(sch.state.stages), tuple(id(i) for i in sch.trace.insts)


UNROLL_STEPS = [0, 16, 64, 512]
#: Largest loop nest the fuzzer unrolls fully (bigger ones only cost LLVM time).
UNROLL_LIMIT = 256


class Fuzzer:
    """Draws and applies random steps to one schedule."""

    def __init__(self, sch: tir.Schedule, chooser: Chooser) -> None:
        self.sch = sch
        self.c = chooser
        self.applied: list[str] = []
        self.last_call = ""  # the schedule call in progress (to report a crash inside it)

    # -- schedule calls --------------------------------------------------------------
    def call(self, method: str, *args: object, **kwargs: object) -> object:
        """Call ``sch.<method>``; if it raises ScheduleError, nothing may have changed."""
        before = fingerprint(self.sch)
        shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        self.last_call = f"sch.{method}({', '.join(shown)})"
        try:
            return getattr(self.sch, method)(*args, **kwargs)
        except ScheduleError as err:
            after = fingerprint(self.sch)
            assert after == before, f"{method} raised ({err}) but changed the schedule"
            raise

    # -- what there is to schedule -----------------------------------------------------
    def blocks(self) -> list[str]:
        return [s.name for s in self.sch.state.compute_stages() if not s.is_inlined]

    def pick(self, seq: list, label: str = "") -> object:
        return self.c.choice(seq, label) if seq else None

    def block(self) -> tir.BlockRV:
        return self.call("get_block", self.pick(self.blocks(), "block"))

    def loops(self, b: tir.BlockRV, own: bool = False) -> list[tir.LoopRV]:
        loops = self.call("get_loops", b)
        if own:
            name = self.sch.get(b).name
            loops = [lp for lp in loops if self.sch.get(lp).block == name]
        return loops

    def loop(self, b: tir.BlockRV | None = None) -> tir.LoopRV | None:
        loops = self.loops(b if b is not None else self.block())
        return self.pick(loops, "loop")

    def related(self, name: str, up: bool) -> list[str]:
        """Transitive consumers (``up=False``) or producers of a block, computed ones only."""
        state = self.sch.state
        out, todo = [], [name]
        while todo:
            cur = todo.pop()
            nxt = state.producers(cur) if up else state.consumers(cur)
            for s in nxt:
                if s.is_compute and s.name not in out:
                    out.append(s.name)
                    todo.append(s.name)
        return [n for n in out if not state.stages[n].is_inlined]

    # -- steps -------------------------------------------------------------------------
    def split(self) -> None:
        lp = self.loop()
        extent = self.sch.get(lp).extent
        n = self.c.integer(2, 3, "nparts")
        style = self.c.choice(["none", "tile", "exact", "bad"], "style")
        if style == "tile":
            vs = self.call("sample_perfect_tile", lp, n, self.c.choice([0, 4, 16]))
            self.call("split", lp, vs)
            return
        if style == "exact":  # factors multiplying to the extent, no None
            divs = [d for d in range(1, extent + 1) if extent % d == 0]
            inner = self.c.choice(divs, "inner")
            factors = [extent // inner, inner] if n == 2 else [1, extent // inner, inner]
        else:
            factors = [self.c.integer(1, max(1, extent + 2), "f") for _ in range(n)]
            if style == "none":
                factors[self.c.integer(0, n - 1, "none at")] = None
        self.call("split", lp, factors=factors)

    def fuse(self) -> None:
        b = self.block()
        loops = self.loops(b, own=self.c.boolean("own"))
        if len(loops) < 2:
            return
        if self.c.integer(0, 9, "adjacent") > 0:
            start = self.c.integer(0, len(loops) - 2, "start")
            count = self.c.integer(2, min(3, len(loops) - start), "count")
            self.call("fuse", *loops[start : start + count])
        else:
            chosen = self.c.permutation(loops, "random")[:2]
            self.call("fuse", *chosen)

    def reorder(self) -> None:
        b = self.block()
        loops = self.loops(b, own=self.c.integer(0, 4, "own") > 0)
        if len(loops) < 2:
            return
        sub = self.c.subset(loops, 2, "subset")
        self.call("reorder", *self.c.permutation(sub, "order"))

    def annotate_loop(self) -> None:
        lp = self.loop()
        kind = self.c.choice(["parallel", "vectorize", "unroll"], "kind")
        if kind == "unroll" and self.nest_size(lp) > UNROLL_LIMIT:
            return  # code size (LLVM time), not correctness
        self.call(kind, lp)

    def nest_size(self, lp: tir.LoopRV) -> int:
        """Iterations of ``lp`` and the loops of its block inside it."""
        info = self.sch.get(lp)
        st = self.sch.state.stage(info.block)
        size = 1
        for name in st.leaves[st.leaves.index(info.name) :]:
            size *= st.iters[name].extent
        return size

    def annotate(self) -> None:
        if self.c.boolean("sampled"):
            value = self.call("sample_categorical", UNROLL_STEPS, [0.25] * 4)
        else:
            value = self.c.choice(UNROLL_STEPS, "max_step")
        target = self.block() if self.c.boolean("on block") else self.loop()
        self.call("annotate", target, "pragma_auto_unroll_max_step", value)

    def compute_at(self) -> None:
        b = self.block()
        name = self.sch.get(b).name
        way = self.c.choice(["consumer", "sampled", "any"], "way")
        if way == "sampled":
            self.call("compute_at", b, self.call("sample_compute_location", b))
            return
        targets = self.related(name, up=False) if way == "consumer" else self.blocks()
        if not targets:
            return
        lp = self.loop(self.call("get_block", self.pick(targets, "target")))
        self.call("compute_at", b, lp)

    def reverse_compute_at(self) -> None:
        b = self.block()
        name = self.sch.get(b).name
        targets = self.related(name, up=True) if self.c.integer(0, 4) else self.blocks()
        if not targets:
            return
        lp = self.loop(self.call("get_block", self.pick(targets, "target")))
        self.call("reverse_compute_at", b, lp)

    def inline(self) -> None:
        b = self.block()
        if self.c.integer(0, 3, "reverse") > 0:
            self.call("compute_inline", b)
        else:
            self.call("reverse_compute_inline", b)

    def compute_root(self) -> None:
        self.call("compute_root", self.block())

    def cache_read(self) -> None:
        b = self.block()
        reads = self.sch.state.stage(self.sch.get(b).name).op.input_tensors
        idx = self.c.integer(0, max(0, len(reads) - 1), "read")
        self.call("cache_read", b, idx, self.c.choice(["local", "global"]))

    def cache_write(self) -> None:
        self.call("cache_write", self.block(), 0, self.c.choice(["local", "global"]))

    def rfactor(self) -> None:
        b = self.block()
        loops = self.loops(b, own=True)
        reduce = [lp for lp in loops if self.sch.get(lp).kind == "reduce"]
        lp = self.pick(reduce if reduce and self.c.integer(0, 5) else loops, "loop")
        if lp is None:
            return
        ndim = len(self.sch.state.stage(self.sch.get(b).name).op.shape)
        self.call("rfactor", lp, self.c.integer(0, ndim, "factor_axis"))

    def decompose_reduction(self) -> None:
        b = self.block()
        lp = self.pick(self.loops(b, own=True), "loop")
        if lp is not None:
            self.call("decompose_reduction", b, lp)

    def storage_align(self) -> None:
        b = self.block()
        ndim = len(self.sch.state.stage(self.sch.get(b).name).op.shape)
        factor = self.c.choice([4, 8, 16], "factor")
        axis = self.c.integer(0, max(0, ndim - 2), "axis")
        self.call("storage_align", b, 0, axis, factor, self.c.integer(0, factor - 1, "offset"))

    def transform_layout(self) -> None:
        b = self.block()
        ndim = len(self.sch.state.stage(self.sch.get(b).name).op.axis)
        perm = self.c.permutation(list(range(ndim)), "layout")
        self.call("transform_layout", b, ("write", 0), perm)

    STEPS = {  # name -> weight
        "split": 6,
        "fuse": 3,
        "reorder": 4,
        "annotate_loop": 4,
        "annotate": 1,
        "compute_at": 5,
        "reverse_compute_at": 2,
        "inline": 3,
        "compute_root": 1,
        "cache_read": 2,
        "cache_write": 2,
        "rfactor": 2,
        "decompose_reduction": 2,
        "storage_align": 1,
        "transform_layout": 2,
    }
    MENU = [name for name, w in STEPS.items() for _ in range(w)]

    def step(self) -> None:
        """One random step (it may make a few schedule calls); a ScheduleError skips it."""
        kind = self.c.choice(self.MENU, "step")
        try:
            getattr(self, kind)()
        except ScheduleError:
            self.applied.append(f"{kind}: ScheduleError")
            return
        self.applied.append(kind)


def random_schedule(sch: tir.Schedule, chooser: Chooser, max_steps: int = 14) -> Fuzzer:
    """Apply between 1 and ``max_steps`` random steps to ``sch``."""
    fz = Fuzzer(sch, chooser)
    for _ in range(chooser.integer(1, max_steps, "steps")):
        fz.step()
    return fz
