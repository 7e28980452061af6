"""Reading TVM's auto-scheduler logs (``RecordToFile``, format v0.6) into our records.

Each TVM record names a registered workload and lists transform steps on the stages of
its compute DAG (``["SP", stage, iter, extent, lengths, inner_to_outer]``, ``["CA", ...]``
...). We replay those steps with our schedule primitives, keeping TVM's bookkeeping of
stage ids (placeholders included; ``cache_write`` and ``rfactor`` insert a stage before,
``cache_read`` after) and of each stage's iterator list, so the ids later steps use keep
pointing at the same loops. The result is an ordinary record with our trace.

Imported records choose and rebuild programs (``apply_best``, ``load_best_record``); their
costs were measured by TVM on another machine, so resume and the cost model leave them out.
A step without a counterpart is a TVMLogError naming the record's step.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import AnsorLabError, RecordError
from ..measure import records as R
from ..measure.records import MeasureResult, RecordInput
from ..schedule.trace import LoopRV

#: ``versions["imported"]`` of a record read from a TVM log
IMPORTED_FROM = "tvm-v0.6"

#: TVM's IteratorAnnotation values -> our primitive (and thread tag)
ANNOTATIONS = {
    0: None, 1: ("unroll",), 2: ("vectorize",), 3: ("parallel",), 4: ("bind", "vthread"),
    5: ("bind", "blockIdx.x"), 6: ("bind", "threadIdx.x"), 7: ("bind", "blockIdx.y"),
    8: ("bind", "threadIdx.y"), 9: ("bind", "blockIdx.z"), 10: ("bind", "threadIdx.z"),
}  # fmt: skip


class TVMLogError(RecordError):
    """A TVM record that cannot be replayed here; the message names the step."""


def is_tvm_record(rec: Any) -> bool:
    """True for one JSON object of a TVM auto-scheduler log."""
    return (
        isinstance(rec, dict)
        and isinstance(rec.get("i"), list)
        and isinstance(rec.get("r"), list)
        and str(rec.get("v", "")).startswith("v0.")
    )


class _Replay:
    """TVM's stage and iterator bookkeeping over one of our schedules."""

    def __init__(self, task: Any) -> None:
        self.sch = task.make_schedule()
        self.stages = list(self.sch.state.stages)  # block names in TVM's stage order
        self.iters: dict[str, list] = {}
        for st in self.sch.state.stages.values():
            if st.is_compute:
                self._fresh(st.block)
        self.steps: list = []

    def _fresh(self, block: str) -> list:
        self.iters[block] = list(self.sch.get_loops(self.sch.get_block(block)))
        return self.iters[block]

    def block(self, sid: int) -> str:
        return self.stages[sid]

    def loop(self, sid: int, iid: int) -> LoopRV:
        return self.iters[self.block(sid)][iid]

    def _split(self, sid: int, iid: int, lengths: list, inner_to_outer: bool) -> None:
        if any(x is None for x in lengths):
            raise TVMLogError("a split with an unfilled length (a sketch, not a program)")
        factors = [None, *lengths] if inner_to_outer else [*lengths, None]
        loops = self.sch.split(self.loop(sid, iid), factors=factors)
        its = self.iters[self.block(sid)]
        its[iid : iid + 1] = loops

    # -- one step -------------------------------------------------------------------
    def apply(self, step: list) -> None:
        kind, args = step[0], step[1:]
        handler = getattr(self, f"_s_{kind}", None)
        if handler is None:
            raise TVMLogError(f"step {kind!r} has no counterpart here")
        handler(*args)
        self.steps.append(step)

    def _s_SP(self, sid, iid, extent, lengths, inner_to_outer) -> None:
        self._split(sid, iid, list(lengths), bool(inner_to_outer))

    def _s_FSP(self, sid, iid, src, n_split) -> None:
        src_lengths = list(self.steps[src][4])
        lengths = src_lengths[: n_split - 1]
        last = 1
        for x in src_lengths[n_split - 1 :]:
            if x is None:
                last = None
                break
            last *= x
        self._split(sid, iid, [*lengths, last], True)

    def _s_FFSP(self, sid, iid, srcs, level, factor_or_nparts) -> None:
        length = 1
        for src in srcs:
            length *= self.steps[src][4][level]
        self._split(sid, iid, [length], bool(factor_or_nparts))

    def _s_RE(self, sid, after) -> None:
        its = self.iters[self.block(sid)]
        order = [its[k] for k in after]
        self.sch.reorder(*order)
        self.iters[self.block(sid)] = order

    def _s_FU(self, sid, fused_ids) -> None:
        its = self.iters[self.block(sid)]
        fused = self.sch.fuse(*[its[k] for k in fused_ids])
        its[fused_ids[0] : fused_ids[-1] + 1] = [fused]

    def _s_AN(self, sid, iid, annotation) -> None:
        how = ANNOTATIONS.get(annotation, "?")
        if how == "?":
            raise TVMLogError(f"annotation {annotation} (tensorize) has no counterpart here")
        if how is None:
            return
        prim, *extra = how
        getattr(self.sch, prim)(self.loop(sid, iid), *extra)

    def _s_PR(self, sid, iid, pragma) -> None:
        key, _, value = str(pragma).partition("$")
        val: Any = int(value) if value.lstrip("-").isdigit() else (value or 1)
        self.sch.annotate(self.loop(sid, iid), f"pragma_{key}", val)

    def _s_CA(self, sid, target_sid, target_iid) -> None:
        self.sch.compute_at(self.sch.get_block(self.block(sid)), self.loop(target_sid, target_iid))

    def _s_CI(self, sid) -> None:
        self.sch.compute_inline(self.sch.get_block(self.block(sid)))

    def _s_CR(self, sid) -> None:
        self.sch.compute_root(self.sch.get_block(self.block(sid)))

    def _s_CHW(self, sid, scope) -> None:
        copy = self.sch.cache_write(self.sch.get_block(self.block(sid)), 0, scope)
        name = self.sch.get(copy).name
        self.stages.insert(sid + 1, name)
        self._fresh(name)

    def _s_CHR(self, sid, scope, reader_sids) -> None:
        if len(reader_sids) != 1:
            raise TVMLogError("cache_read shared by several readers has no counterpart here")
        reader = self.sch.get_block(self.block(reader_sids[0]))
        read = self.sch.state.stage(self.block(sid)).op.name
        inputs = [
            t.op.name for t in self.sch.state.stage(self.block(reader_sids[0])).op.input_tensors
        ]
        cache = self.sch.cache_read(reader, inputs.index(read), scope)
        name = self.sch.get(cache).name
        self.stages.insert(sid + 1, name)
        self._fresh(name)

    def _s_RF(self, sid, iid, factor_iid) -> None:
        block = self.block(sid)
        rf = self.sch.rfactor(self.loop(sid, iid), factor_iid)
        name = self.sch.get(rf).name
        self.stages.insert(sid, name)
        self._fresh(name)
        self._fresh(block)

    def _s_SA(self, sid, iid, factor, offset) -> None:
        self.sch.storage_align(self.sch.get_block(self.block(sid)), 0, iid, factor, offset)


def replay(task: Any, steps: list) -> Any:
    """Our schedule of ``task`` after TVM's ``steps`` (TVMLogError names a failing step)."""
    rp = _Replay(task)
    for k, step in enumerate(steps):
        try:
            rp.apply(step)
        except TVMLogError as err:
            raise TVMLogError(f"step {k} {json.dumps(step)}: {err}") from None
        except (AnsorLabError, IndexError, KeyError, TypeError, ValueError) as err:
            raise TVMLogError(f"step {k} {json.dumps(step)} does not replay here: {err}") from None
    return rp.sch


def _task_of(key: str, target: str) -> Any:
    from .task import WORKLOAD_FUNC_REGISTRY, SearchTask  # noqa: PLC0415 - task imports records

    try:
        name = json.loads(key)[0]
    except (ValueError, IndexError, TypeError):
        name = key
    if name not in WORKLOAD_FUNC_REGISTRY:
        raise TVMLogError(
            f"workload {name!r} is not registered: define the same function with "
            "@auto_scheduler.register_workload before reading this TVM log"
        )
    kind = target.split()[0] if target else "llvm"
    return SearchTask(workload_key=key, target=kind if kind in ("llvm", "cuda") else "llvm")


def decode_tvm(rec: dict) -> tuple[RecordInput, MeasureResult]:
    """One TVM record as ours (its steps replayed into our trace)."""
    try:
        (key, target, *_), (_, steps) = rec["i"][0], rec["i"][1]
        costs, error_no, all_cost, timestamp = rec["r"][:4]
    except (ValueError, TypeError, IndexError, KeyError):
        raise TVMLogError("not a TVM v0.6 record (fields 'i' and 'r')") from None
    task = _task_of(key, target)
    sch = replay(task, steps)
    versions = {**R.versions(), "imported": IMPORTED_FROM, "tvm_target": target}
    # labelled with TVM's target and no CPU digest of ours: the cost was measured by TVM on
    # its machine, and only choosing a program (RecordKey, imported_ok) may use it
    inp = RecordInput(
        task.workload_key,
        task.structure_key,
        str(target),
        IMPORTED_FROM,
        versions,
        sch.trace.as_json(),
        task.dag_json,
        task.compute_dag.flop_ct,
    )
    res = MeasureResult([float(c) for c in costs], int(error_no), "", float(all_cost),
                        float(timestamp))  # fmt: skip
    return inp, res


R.FOREIGN_DECODERS.append((is_tvm_record, decode_tvm))
