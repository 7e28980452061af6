"""Random schedules of loop programs: random primitive steps, refused ones skipped."""

from __future__ import annotations

import random

from ansor_lab.errors import ScheduleError
from ansor_lab.schedule.loop_program_ir import blocks_of

PRIMS = (
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_at",
    "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
    "cache_write", "decompose_reduction",
)  # fmt: skip


def _step(sch, rng: random.Random, prim: str) -> None:
    names = [b.name for b in blocks_of(sch.func.body)]
    block = sch.get_block(rng.choice(names))
    loops = sch.get_loops(block)
    if prim in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, prim)(block)
    elif prim == "cache_read":
        sch.cache_read(block, rng.randrange(2), rng.choice(["shared", "local"]))
    elif prim == "cache_write":
        sch.cache_write(block, 0, "local")
    elif not loops:
        raise ScheduleError("no loops")
    elif prim == "split":
        sch.split(rng.choice(loops), [None, rng.randint(2, 5)])
    elif prim == "fuse":
        k = rng.randrange(len(loops))
        sch.fuse(*loops[k : k + 2])
    elif prim == "reorder":
        a, b = sorted(rng.sample(range(len(loops)), 2)) if len(loops) > 1 else (0, 0)
        sch.reorder(loops[b], loops[a])
    elif prim in ("parallel", "vectorize", "unroll"):
        loop = rng.choice(loops)
        if prim == "unroll" and sch.get(loop).extent.value > 8:
            raise ScheduleError("skipped: unrolling a long loop only makes LLVM slow")
        getattr(sch, prim)(loop)
    elif prim == "decompose_reduction":
        sch.decompose_reduction(block, rng.choice(loops))
    else:  # compute_at / reverse_compute_at: mostly a loop of a consumer / producer
        near = sch.get_consumers(block) if prim == "compute_at" else sch.get_producers(block)
        other = (
            rng.choice(near) if near and rng.random() < 0.8 else sch.get_block(rng.choice(names))
        )
        target = sch.get_loops(other)
        if not target:
            raise ScheduleError("no loops")
        getattr(sch, prim)(block, rng.choice(target))


def random_schedule(sch, seed: int, steps: int) -> list[str]:
    """Apply ``steps`` random primitive calls; return the ones that were applied.

    A refused step must leave the program exactly as it was."""
    rng = random.Random(seed)
    applied = []
    for _ in range(steps):
        prim = rng.choice(PRIMS)
        before = sch.func
        try:
            _step(sch, rng, prim)
            applied.append(prim)
        except ScheduleError:
            assert sch.func is before, f"a refused {prim} changed the program"
    return applied
