"""The schedule explorer: schedule a PrimFunc by clicking, one recorded step at a time.

``ex = ScheduleExplorer(te.create_prim_func([A, B, C]))`` shows a widget: pick a block,
a primitive and its loops (split offers the divisors of the loop's extent; compute_at
offers only the loops where it is legal, found by trying each on a copy), Apply. Every
step is a recorded instruction on an internal ``tir.Schedule`` (``ex.schedule``; its
``trace`` is the clicked steps). The IR pane highlights the lines a step changed; Measure
builds the program, checks it against the numpy reference and times it; the chart shows
GFLOPS (or time) per step. Undo/redo replay a prefix of the trace on a fresh schedule;
the trace exports as Python or JSON. An illegal step is shown inline and changes nothing.

Every button has a method (``apply``, ``undo``, ``redo``, ``measure``, ``export_python``,
``export_json``), so a script or a test drives the explorer without a browser.
"""

from __future__ import annotations

import difflib
import html
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnsorLabError, ScheduleError
from ..ir import nodes as N
from ..schedule.block_view import lowered_script
from ..schedule.tir_schedule import LoopInfo, Schedule
from ..schedule.trace import BlockRV, LoopRV, Trace

#: The primitives the explorer offers, in menu order.
OPS = (
    "split",
    "tile",
    "reorder",
    "fuse",
    "vectorize",
    "parallel",
    "unroll",
    "compute_at",
    "reverse_compute_at",
    "compute_inline",
    "cache_write",
)

#: Which parameter widgets each primitive uses.
_PARAMS = {
    "split": ("loop", "factor"),
    "tile": ("loop", "factor", "loop2", "factor2"),
    "reorder": ("order",),
    "fuse": ("fuse",),
    "vectorize": ("loop",),
    "parallel": ("loop",),
    "unroll": ("loop",),
    "compute_at": ("target",),
    "reverse_compute_at": ("target",),
    "compute_inline": (),
    "cache_write": ("scope",),
}


class ExplorerError(AnsorLabError, ValueError):
    """A step was asked for with missing or unknown parameters."""


@dataclass(frozen=True)
class ExplorerStep:
    """One applied step: the primitive, its block, its parameters (by loop name) and the
    length of the schedule's trace once it was applied."""

    op: str
    block: str
    params: dict = field(hash=False)
    trace_len: int = 0

    def __str__(self) -> str:
        shown = []
        for k, v in self.params.items():
            if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) for x in v):
                v = f"{v[0]}.{v[1]}"
            elif isinstance(v, list):
                v = (
                    "["
                    + ", ".join(f"{x[0]}.{x[1]}" if isinstance(x, tuple) else str(x) for x in v)
                    + "]"
                )
            shown.append(f"{k}={v}")
        return f"{self.op}({self.block}{', ' if shown else ''}{', '.join(shown)})"


@dataclass(frozen=True)
class Measurement:
    """One Measure click: after ``step`` steps, seconds per run and GFLOPS, and whether the
    outputs matched the numpy reference (``max_error`` is the largest absolute difference)."""

    step: int
    label: str
    seconds: float
    gflops: float
    max_error: float
    correct: bool


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _default_factor(extent: int) -> int:
    options = [d for d in divisors(extent) if 1 < d < extent]
    for want in (8, 4, 16, 2):
        if want in options:
            return want
    return options[0] if options else extent


def ir_diff_html(old: str, new: str) -> tuple[str, list[int]]:
    """HTML of ``new`` with the lines that differ from ``old`` highlighted, and their
    indices."""
    a, b = old.splitlines(), new.splitlines()
    changed: set[int] = set()
    if old:
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                changed.update(range(j1, j2))
    rows = []
    for k, line in enumerate(b):
        cls = "ansor-ir-line ansor-ir-changed" if k in changed else "ansor-ir-line"
        bg = "background:#fff1a8;" if k in changed else ""
        rows.append(
            f'<div class="{cls}" style="white-space:pre;{bg}">{html.escape(line) or " "}</div>'
        )
    body = "".join(rows)
    return (
        f'<div class="ansor-ir" style="font-family:monospace;font-size:12px;'
        f"line-height:1.35;max-height:420px;overflow:auto;border:1px solid #ddd;"
        f"width:100%;box-sizing:border-box;"
        f'padding:4px;">{body}</div>'
    ), sorted(changed)


class ScheduleExplorer:
    """Interactive, recorded scheduling of one PrimFunc (see the module docstring).

    ``func`` comes from ``te.create_prim_func``; ``target`` is what Measure builds for;
    ``number``/``repeat``/``min_repeat_ms`` go to ``time_evaluator``; outputs must match
    the reference within ``rtol``/``atol``. ``display=True`` shows the widget at once
    when running in a notebook.
    """

    def __init__(
        self,
        func: Any,
        target: Any = "llvm",
        seed: int = 0,
        number: int = 3,
        repeat: int = 3,
        min_repeat_ms: float = 20.0,
        rtol: float = 1e-3,
        atol: float = 1e-3,
        display: bool = True,
    ) -> None:
        if isinstance(func, N.IRModule):
            func = func.main_function()
        if isinstance(func, Schedule):
            func = func.func
        if not isinstance(func, N.PrimFunc) or getattr(func.source, "args", None) is None:
            raise ExplorerError(
                "ScheduleExplorer needs a PrimFunc made by te.create_prim_func([A, B, C]); "
                f"got {type(func).__name__}"
            )
        from ..codegen.target import as_target
        from ..dsl.dag import ComputeDAG

        self.func = func
        self.target = as_target(target)
        self.seed = seed
        self.timing = {"number": number, "repeat": repeat, "min_repeat_ms": min_repeat_ms}
        self.rtol, self.atol = rtol, atol
        self.flop_ct = ComputeDAG(list(func.source.args)).flop_ct
        self.schedule = Schedule(func)
        self._history: list[ExplorerStep] = []
        self._pos = 0
        self._full: list = []  # instructions of the furthest schedule (for redo)
        self.measurements: list[Measurement] = []
        self.error = ""
        self.message = ""
        self.ir_text = lowered_script(self.schedule.mod)
        self.previous_ir = ""
        self.changed_lines: list[int] = []
        self._ir_html = ir_diff_html("", self.ir_text)[0]
        self.block = self.blocks[-1]
        self._arrays_cache: tuple | None = None
        self._loops_cache: dict = {}
        self._targets_cache: dict = {}
        self._ui: Any = None
        self._displayed_at: Any = None
        if display:
            self._display_now()

    # -- reading the schedule ---------------------------------------------------------
    @property
    def steps(self) -> list[ExplorerStep]:
        """The steps applied now (undone ones excluded)."""
        return list(self._history[: self._pos])

    @property
    def can_undo(self) -> bool:
        """Whether there is a step to undo."""
        return self._pos > 0

    @property
    def can_redo(self) -> bool:
        """Whether there is an undone step to redo."""
        return self._pos < len(self._history)

    @property
    def blocks(self) -> list[str]:
        """Blocks that still have loops (inlined ones excluded), producers first."""
        return [st.name for st in self.schedule.state.compute_stages() if not st.is_inlined]

    def loops(self, block: str | None = None) -> list[LoopInfo]:
        """The loops around ``block`` now (those of blocks it is computed inside included)."""
        block = block or self.block
        key = (len(self.schedule.trace.insts), id(self.schedule), block)
        if key not in self._loops_cache:
            probe = self.schedule.copy()  # get_loops records; keep the real trace clean
            rvs = probe.get_loops(probe.get_block(block))
            self._loops_cache[key] = [probe.get(rv) for rv in rvs]
        return list(self._loops_cache[key])

    def _resolve_loop(self, block: str, loop: Any) -> tuple[str, str]:
        infos = self.loops(block)
        if isinstance(loop, LoopInfo):
            return (loop.block, loop.name)
        if isinstance(loop, (tuple, list)) and len(loop) == 2:
            owner, name = str(loop[0]), str(loop[1])
            if any(i.block == owner and i.name == name for i in infos) or owner != block:
                return (owner, name)
            loop = name
        if not isinstance(loop, str):
            raise ExplorerError(f"a loop is a name like 'j' or a pair ('C', 'j'), not {loop!r}")
        mine = [i for i in infos if i.name == loop and i.block == block]
        other = [i for i in infos if i.name == loop]
        found = mine or other
        if not found:
            names = ", ".join(i.name for i in infos) or "none"
            raise ExplorerError(f"block {block!r} has no loop {loop!r}; its loops: {names}")
        return (found[0].block, found[0].name)

    # -- handles on a schedule --------------------------------------------------------
    @staticmethod
    def _handles(sch: Schedule) -> tuple[dict, dict]:
        """Valid loop and block handles in ``sch``'s trace, by (block, loop) / block name."""
        loops: dict = {}
        blocks: dict = {}
        for inst in sch.trace.insts:
            for rv in inst.outputs:
                if not isinstance(rv, (LoopRV, BlockRV)):
                    continue
                try:
                    info = sch.get(rv)
                except ScheduleError:
                    continue  # a stale loop (split or fused away)
                if isinstance(info, LoopInfo):
                    loops[(info.block, info.name)] = rv
                elif isinstance(rv, BlockRV):
                    blocks[info.name] = rv
        return loops, blocks

    def _block_rv(self, sch: Schedule, name: str) -> BlockRV:
        rv = self._handles(sch)[1].get(name)
        return rv if rv is not None else sch.get_block(name)

    def _loop_rv(self, sch: Schedule, owner: str, name: str) -> LoopRV:
        rv = self._handles(sch)[0].get((owner, name))
        if rv is None:
            for cand in sch.get_loops(self._block_rv(sch, owner)):
                info = sch.get(cand)
                if (info.block, info.name) == (owner, name):
                    rv = cand
        if rv is None:
            raise ExplorerError(f"block {owner!r} has no loop {name!r}")
        return rv

    # -- applying steps ---------------------------------------------------------------
    def _normalize(self, op: str, block: str, params: dict) -> dict:
        """Parameters with loops resolved to (block, loop) pairs; checks what is needed."""
        p = dict(params)

        def need(name: str) -> Any:
            if p.get(name) is None:
                raise ExplorerError(f"{op} needs {name}=...")
            return p[name]

        out: dict = {}
        if op == "split":
            out["loop"] = self._resolve_loop(block, need("loop"))
            if p.get("factors") is not None:
                out["factors"] = [None if f is None else int(f) for f in p["factors"]]
            else:
                out["factor"] = int(need("factor"))
        elif op == "tile":
            x = p.get("x", p.get("loop"))
            y = p.get("y", p.get("loop2"))
            if x is None or y is None:
                raise ExplorerError("tile needs two loops: x=... and y=...")
            out["x"] = self._resolve_loop(block, x)
            out["y"] = self._resolve_loop(block, y)
            out["x_factor"] = int(p.get("x_factor", p.get("factor")) or 0) or need("x_factor")
            out["y_factor"] = int(p.get("y_factor", p.get("factor2")) or 0) or need("y_factor")
        elif op in ("reorder", "fuse"):
            loops = need("loops")
            if isinstance(loops, str):
                loops = [x.strip() for x in loops.replace(",", " ").split() if x.strip()]
            out["loops"] = [self._resolve_loop(block, x) for x in loops]
            if len(out["loops"]) < (2 if op == "fuse" else 1):
                raise ExplorerError(f"{op} needs at least two loops")
        elif op in ("vectorize", "parallel", "unroll"):
            out["loop"] = self._resolve_loop(block, need("loop"))
        elif op in ("compute_at", "reverse_compute_at"):
            target = need("target")
            if (
                isinstance(target, str)
                and "." in target
                and target.rsplit(".", 1)[0] in self.blocks
            ):
                target = tuple(target.rsplit(".", 1))
            if not (isinstance(target, (tuple, list)) and len(target) == 2):
                raise ExplorerError(f"{op}: target is a (block, loop) pair like ('D', 'i')")
            out["target"] = (str(target[0]), str(target[1]))
        elif op == "cache_write":
            out["scope"] = str(p.get("scope") or "local")
        elif op == "compute_inline":
            pass
        else:
            raise ExplorerError(f"unknown step {op!r}; the explorer offers {', '.join(OPS)}")
        return out

    def _run(self, sch: Schedule, op: str, block: str, p: dict) -> None:
        """Apply one normalized step to ``sch`` (which may be left half-changed on error)."""
        loop = lambda key: self._loop_rv(sch, *p[key])
        if op == "split":
            factors = p.get("factors") or [None, p["factor"]]
            sch.split(loop("loop"), factors=factors)
        elif op == "tile":
            sch.tile(loop("x"), loop("y"), p["x_factor"], p["y_factor"])
        elif op == "reorder":
            sch.reorder(*[self._loop_rv(sch, *x) for x in p["loops"]])
        elif op == "fuse":
            sch.fuse(*[self._loop_rv(sch, *x) for x in p["loops"]])
        elif op in ("vectorize", "parallel", "unroll"):
            getattr(sch, op)(loop("loop"))
        elif op in ("compute_at", "reverse_compute_at"):
            getattr(sch, op)(self._block_rv(sch, block), loop("target"))
        elif op == "compute_inline":
            sch.compute_inline(self._block_rv(sch, block))
        elif op == "cache_write":
            sch.cache_write(self._block_rv(sch, block), 0, p["scope"])

    def apply(self, op: str, block: str | None = None, **params: Any) -> ExplorerStep | None:
        """Apply one step, like the Apply button: ``apply("split", loop="j", factor=8)``.

        Loops are names of the block's loops (or (block, loop) pairs). On success the step
        is recorded and returned; an illegal step is shown inline (``ex.error``), returns
        None and leaves the schedule and its trace unchanged.
        """
        block = block or self.block
        try:
            if block not in self.blocks:
                raise ExplorerError(f"no block {block!r}; blocks: {', '.join(self.blocks)}")
            norm = self._normalize(op, block, params)
            trial = self.schedule.copy()  # atomic: the real schedule changes only on success
            self._run(trial, op, block, norm)
            text = lowered_script(trial.mod)
        except AnsorLabError as err:
            self._set_error(f"{op} on block {block!r}: {err}")
            return None
        step = ExplorerStep(op, block, norm, len(trial.trace.insts))
        del self._history[self._pos :]
        self._history.append(step)
        self._pos += 1
        self._full = list(trial.trace.insts)
        self._adopt(trial, text, f"applied {step}")
        return step

    def _adopt(self, sch: Schedule, text: str | None, message: str) -> None:
        self.schedule = sch
        self.previous_ir = self.ir_text
        self.ir_text = text if text is not None else lowered_script(sch.mod)
        self._ir_html, self.changed_lines = ir_diff_html(self.previous_ir, self.ir_text)
        self.error = ""
        self.message = message
        if self.block not in self.blocks:
            self.block = self.blocks[-1]
        self._refresh()

    def _replay_prefix(self, n: int) -> Schedule:
        """A fresh schedule with the first ``n`` instructions of the furthest trace."""
        sch = Schedule(self.func)
        Trace(self._full[:n]).apply_to_schedule(sch)
        return sch

    def undo(self) -> bool:
        """Undo the last step (replays the trace before it on a fresh schedule)."""
        if not self.can_undo:
            self._set_error("nothing to undo")
            return False
        self._pos -= 1
        n = self._history[self._pos - 1].trace_len if self._pos else 0
        self._adopt(self._replay_prefix(n), None, f"undid {self._history[self._pos]}")
        return True

    def redo(self) -> bool:
        """Redo the last undone step."""
        if not self.can_redo:
            self._set_error("nothing to redo")
            return False
        step = self._history[self._pos]
        self._pos += 1
        self._adopt(self._replay_prefix(step.trace_len), None, f"redid {step}")
        return True

    def reset(self) -> None:
        """Back to the unscheduled program (the steps stay available to redo)."""
        while self.can_undo:
            self.undo()

    def select(self, block: str) -> None:
        """Make ``block`` the block the next steps apply to."""
        if block not in self.blocks:
            self._set_error(f"no block {block!r}; blocks: {', '.join(self.blocks)}")
            return
        self.block = block
        self._refresh()

    def legal_targets(self, op: str = "compute_at", block: str | None = None) -> list[tuple]:
        """(block, loop) pairs where ``op`` (compute_at / reverse_compute_at) of ``block``
        is legal now: each is tried on a copy of the schedule."""
        if op not in ("compute_at", "reverse_compute_at"):
            raise ExplorerError("legal_targets is for compute_at and reverse_compute_at")
        block = block or self.block
        key = (len(self.schedule.trace.insts), id(self.schedule), op, block)
        if key in self._targets_cache:
            return list(self._targets_cache[key])
        found = []
        for other in self.blocks:
            if other == block:
                continue
            for info in self.loops(other):
                if info.block != other:
                    continue
                trial = self.schedule.copy()
                try:
                    self._run(trial, op, block, {"target": (other, info.name)})
                except AnsorLabError:
                    continue
                found.append((other, info.name))
        self._targets_cache[key] = found
        return list(found)

    # -- measuring --------------------------------------------------------------------
    def _arrays(self) -> tuple[list, list, list]:
        """Inputs (fixed per explorer), the reference outputs, and which args are outputs."""
        if self._arrays_cache is None:
            from ..dsl.reference import reference_outputs
            from ..measure.workers import random_inputs

            args = list(self.func.source.args)
            params = [(t.name, tuple(t.shape), t.dtype) for t in args]
            arrays = random_inputs(params, self.seed)
            outputs = [k for k, t in enumerate(args) if t in self.func.source.outputs()]
            expected = reference_outputs(args, arrays)
            self._arrays_cache = (arrays, expected, outputs)
        return self._arrays_cache

    def measure(self) -> Measurement | None:
        """Build the current program, check it against the numpy reference, time it."""
        from ..runtime.build import build

        arrays, expected, outputs = self._arrays()
        try:
            mod = build(self.schedule, target=self.target)
            run = [a.copy() if k not in outputs else np.zeros_like(a) for k, a in enumerate(arrays)]
            mod(*run)
            err = max(
                (
                    float(np.max(np.abs(run[k].astype(np.float64) - expected[k])))
                    if run[k].size
                    else 0.0
                )
                for k in outputs
            )
            ok = all(
                np.allclose(run[k], expected[k], rtol=self.rtol, atol=self.atol) for k in outputs
            )
            res = mod.time_evaluator(**self.timing)(*run)
        except AnsorLabError as err_:
            self._set_error(f"measure: {err_}")
            return None
        seconds = float(res.median)
        label = str(self._history[self._pos - 1]) if self._pos else "unscheduled"
        m = Measurement(
            self._pos, label, seconds, self.flop_ct / seconds / 1e9 if seconds > 0 else 0.0, err, ok
        )
        self.measurements.append(m)
        self.error = ""
        verdict = "correct" if ok else f"WRONG (max error {err:.3g})"
        self.message = (
            f"after {self._pos} steps: {seconds * 1e3:.4g} ms, {m.gflops:.3g} GFLOPS, {verdict}"
        )
        self._refresh()
        return m

    # -- export -----------------------------------------------------------------------
    def export_python(self, new_cell: bool = False, func_name: str = "func") -> str:
        """The steps as a Python script (the trace as ``apply_trace``, then its replay).

        With ``new_cell=True`` (called from a notebook cell) the script is put into a new
        cell below via IPython's ``set_next_input``.
        """
        text = (
            f"# {self._pos} steps from the schedule explorer; `{func_name}` is the PrimFunc "
            "it was opened on\nfrom ansor_lab import tir\n\n"
            f"{self.schedule.trace}\n\n\nsch = tir.Schedule({func_name})\napply_trace(sch)\n"
            "sch.mod.show()\n"
        )
        if new_cell:
            ip = _ipython()
            if ip is not None:
                ip.set_next_input(text, replace=False)
        if self._ui is not None:
            self._ui.show_export(text)
        return text

    def export_json(self, indent: int | None = None) -> str:
        """The trace as JSON text (replay it with ``tir.Schedule(func).replay(text)``)."""
        text = json.dumps(self.schedule.trace.as_json(), indent=indent)
        if self._ui is not None:
            self._ui.show_export(text)
        return text

    # -- the widget -------------------------------------------------------------------
    def _set_error(self, text: str) -> None:
        self.error = text
        if self._ui is not None:
            self._ui.show_error(text)

    def _refresh(self) -> None:
        if self._ui is not None:
            self._ui.refresh()

    @property
    def widget(self) -> Any:
        """The ipywidgets UI (built on first use)."""
        if self._ui is None:
            from ._explorer_ui import ExplorerUI

            self._ui = ExplorerUI(self)
            self._ui.refresh()
        return self._ui.root

    def ir_html(self) -> str:
        """The IR pane's HTML: the current program, the lines the last change touched
        highlighted (``changed_lines`` holds their indices)."""
        return self._ir_html

    def _display_now(self) -> None:
        ip = _ipython()
        if ip is None or getattr(ip, "kernel", None) is None:
            return
        from IPython.display import display

        display(self.widget)
        self._displayed_at = getattr(ip, "execution_count", None)

    def _ipython_display_(self) -> None:
        ip = _ipython()
        if (
            self._displayed_at is not None
            and ip is not None
            and getattr(ip, "execution_count", None) == self._displayed_at
        ):
            return  # the constructor already showed it in this cell
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        return f"ScheduleExplorer({len(self.steps)} steps, block {self.block!r})\n{self.ir_text}"


def _ipython() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()
