"""Pictures of a CUDA schedule: which block and thread computes which output element, and
which input elements one block's shared tiles hold, step by step.

``thread_map(mod_or_func)`` evaluates the stores and shared-memory fills of the kernel
form for every block, thread and loop iteration (numpy over all of them at once: sizes of
a notebook, up to a few million iterations) and returns a ``ThreadMap``; displayed in a
notebook it is an SVG: the output grid coloured by block (hue) and thread (lightness),
and for the chosen block each input's elements coloured by the iteration of the outer
loop in which they are fetched into shared memory (the march of the tiles).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..codegen.kernel_form import KernelProgram, split_kernels
from ..errors import AnsorLabError
from ..ir import gpu, nodes as N
from ..ir.index_values import evaluate
from .html import esc

#: iterations evaluated at most (the picture is for notebook sizes)
MAX_POINTS = 8_000_000
#: cells drawn per side at most: a larger grid is drawn every n-th row and column
MAX_CELLS = 64


@dataclass(frozen=True)
class ThreadMap:
    """Who computes what: per output element its block and thread (linear ids, -1: none),
    and per input the fetch step of each element for ``block`` (-1: not fetched)."""

    output: str
    block_of: np.ndarray
    thread_of: np.ndarray
    grid: tuple
    block: tuple
    chosen_block: int
    tiles: tuple  # (input name, 2-D array of fetch steps) for the chosen block

    def _repr_html_(self) -> str:
        return thread_map_svg(self)

    def summary(self) -> str:
        """Counts that say the same as the picture, in words."""
        blocks = len(np.unique(self.block_of[self.block_of >= 0]))
        per_thread = np.bincount(
            (self.block_of * 4096 + self.thread_of)[self.block_of >= 0].ravel()
        )
        lines = [
            f"{self.output}: {self.block_of.size} elements computed by {blocks} blocks of "
            f"{int(np.prod(self.block))} threads; each thread computes "
            f"{int(per_thread[per_thread > 0].min())}-{int(per_thread.max())} elements"
        ]
        for name, steps in self.tiles:
            n_steps = int(steps.max()) + 1 if (steps >= 0).any() else 0
            fetched = int((steps >= 0).sum())
            lines.append(
                f"block {self.chosen_block} fetches {fetched} elements of {name} into shared "
                f"memory in {n_steps} step(s)"
            )
        return "\n".join(lines)


def _program(obj: Any) -> KernelProgram:
    if isinstance(obj, KernelProgram):
        return obj
    program = getattr(obj, "kernel_program", None)  # a CUDAModule
    if program is not None:
        return program
    if isinstance(obj, N.IRModule):
        obj = next(iter(obj.functions.values()))
    if isinstance(obj, N.PrimFunc):
        return split_kernels(obj)
    raise AnsorLabError(
        f"thread_map takes a CUDA module (tvm.build(..., target='cuda')), a lowered PrimFunc "
        f"or a KernelProgram, not {type(obj).__name__}"
    )


def _fold2(shape: tuple) -> tuple:
    if len(shape) <= 1:
        return (1, int(np.prod(shape)) if shape else 1)
    return (int(np.prod(shape[:-1])), int(shape[-1]))


class _Enum:
    """Every iteration of the loops around a statement, as numpy arrays."""

    def __init__(self, loops: list, fixed: dict) -> None:
        ranges = [np.arange(lp.extent.value) if lp.loop_var not in fixed else None for lp in loops]
        free = [r for r in ranges if r is not None]
        total = int(np.prod([len(r) for r in free])) if free else 1
        if total > MAX_POINTS:
            raise AnsorLabError(
                f"the picture would evaluate {total} iterations; draw a smaller problem"
            )
        grids = np.meshgrid(*free, indexing="ij") if free else []
        self.env: dict = {}
        it = iter(grids)
        for lp, r in zip(loops, ranges):
            self.env[lp.loop_var] = fixed[lp.loop_var] if r is None else next(it).ravel()
        self.size = total


def _walk(s: N.Stmt, loops: list, out: list, shared_depth: list) -> None:
    if isinstance(s, N.For):
        _walk(s.body, [*loops, s], out, shared_depth)
    elif isinstance(s, N.SeqStmt):
        for x in s.seq:
            _walk(x, loops, out, shared_depth)
    elif isinstance(s, (N.Allocate, N.Block, N.LetStmt)):
        _walk(s.body, loops, out, shared_depth)
    elif isinstance(s, N.IfThenElse):
        _walk(s.then_case, loops, out, shared_depth)
        if s.else_case is not None:
            _walk(s.else_case, loops, out, shared_depth)
    elif isinstance(s, N.BufferStore):
        out.append((s, loops))


def _linear(env: dict, loops: list, tags: tuple, extents: tuple) -> np.ndarray:
    ids = 0
    scale = 1
    for tag, ext in zip(tags, extents):
        var = next((lp.loop_var for lp in loops if lp.thread_tag == tag), None)
        if var is not None:
            ids = ids + np.asarray(env[var]) * scale
        scale *= ext
    return np.asarray(ids)


def _flat(buf: N.Buffer, indices: tuple, env: dict) -> np.ndarray:
    flat = 0
    for idx, stride in zip(indices, buf.strides):
        flat = flat + np.asarray(evaluate(idx, env)) * stride
    return np.asarray(flat, dtype=np.int64)


def thread_map(obj: Any, output: str | None = None, block: int = 0) -> ThreadMap:
    """Which block/thread writes each element of ``output`` (default: the last parameter),
    and the shared-memory fetch steps of block ``block`` (see the module docstring)."""
    program = _program(obj)
    params = program.func.params
    out_buf = next((b for b in params if b.name == output), None) if output else params[-1]
    if out_buf is None:
        raise AnsorLabError(f"no parameter {output!r}; it has {[b.name for b in params]}")
    shape = _fold2(out_buf.shape)
    block_of = np.full(out_buf.size, -1, dtype=np.int64)
    thread_of = np.full(out_buf.size, -1, dtype=np.int64)
    tiles: dict[str, np.ndarray] = {}
    grid_dims, block_dims = (1, 1, 1), (1, 1, 1)
    for k in program.kernels:
        stores: list = []
        _walk(k.body, [], stores, [])
        for store, loops in stores:
            if store.buffer is out_buf:
                e = _Enum(loops, {})
                flat = _flat(store.buffer, store.indices, e.env)
                flat = np.broadcast_to(flat, (e.size,))
                block_of[flat] = np.broadcast_to(
                    _linear(e.env, loops, gpu.BLOCK_TAGS, k.grid), (e.size,)
                )
                thread_of[flat] = np.broadcast_to(
                    _linear(e.env, loops, gpu.THREAD_TAGS, k.block), (e.size,)
                )
                grid_dims, block_dims = k.grid, k.block
            elif store.buffer.scope == "shared":
                _fetches(store, loops, k, block, tiles)
    inputs = {b.name: b for b in params}
    tile_list = tuple(
        (name, steps.reshape(_fold2(inputs[name].shape)))
        for name, steps in tiles.items()
        if name in inputs
    )
    return ThreadMap(
        out_buf.name,
        block_of.reshape(shape),
        thread_of.reshape(shape),
        grid_dims,
        block_dims,
        block,
        tile_list,
    )


def _fetches(store: N.BufferStore, loops: list, k: Any, block: int, tiles: dict) -> None:
    """Mark, for block ``block``, the step (outermost serial loop's iteration) at which
    each global element read by a shared-memory fill is fetched."""
    from ..search.gpu_access import _loads  # noqa: PLC0415 - one walker of loads

    fixed = {}
    rest = block
    for tag, ext in zip(gpu.BLOCK_TAGS, k.grid):  # the chosen block's indices
        var = next((lp.loop_var for lp in loops if lp.thread_tag == tag), None)
        if var is not None:
            fixed[var] = rest % ext
        rest //= ext
    e = _Enum(loops, fixed)
    serial = [lp for lp in loops if lp.kind != "thread_binding"]
    step = np.asarray(e.env[serial[0].loop_var]) if serial else np.zeros(1, dtype=np.int64)
    found: list = []
    _loads(store.value, found)
    for ld in found:
        if ld.buffer.scope != "global":
            continue
        flat = np.broadcast_to(_flat(ld.buffer, ld.indices, e.env), (e.size,))
        steps = tiles.setdefault(ld.buffer.name, np.full(ld.buffer.size, -1, dtype=np.int64))
        st = np.broadcast_to(step, (e.size,))
        order = np.argsort(-st, kind="stable")  # the first step wins when written last
        steps[flat[order]] = st[order]


def _block_color(b: int, t: int, n_blocks: int, n_threads: int) -> str:
    if b < 0:
        return "#eeeeee"
    hue = (b * 0.61803398875) % 1.0 if n_blocks > 12 else b / max(1, n_blocks)
    light = 0.35 + 0.45 * (t / max(1, n_threads - 1))
    r, g, bl = colorsys.hls_to_rgb(hue, light, 0.75)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(bl * 255):02x}"


def _step_color(s: int, n: int) -> str:
    if s < 0:
        return "#f4f4f4"
    r, g, b = colorsys.hls_to_rgb(0.58 - 0.5 * s / max(1, n - 1), 0.5, 0.8)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def _grid_svg(values: np.ndarray, color: Any, title: str, size: float) -> str:
    """One panel; ``color(i, j)`` of the full grid, drawn every ``step``-th cell."""
    step = -(-max(values.shape) // MAX_CELLS)
    if step > 1:
        title += f" (every {step}th row and column)"
    rows, cols = -(-values.shape[0] // step), -(-values.shape[1] // step)
    cell = size / max(rows, cols)
    w, h = cols * cell, rows * cell
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2:.0f}" height="{h + 18:.0f}">',
        f'<text x="0" y="12" font-size="11" font-family="sans-serif">{esc(title)}</text>',
        '<g transform="translate(1,16)">',
    ]
    for i in range(rows):
        for j in range(cols):
            parts.append(
                f'<rect x="{j * cell:.2f}" y="{i * cell:.2f}" width="{cell:.2f}" '
                f'height="{cell:.2f}" fill="{color(i * step, j * step)}"/>'
            )
    parts.append("</g></svg>")
    return "".join(parts)


def thread_map_svg(m: ThreadMap, size: int = 260) -> str:
    """The output grid by block and thread, and each input's shared-memory fetch steps."""
    n_blocks = int(np.prod(m.grid))
    n_threads = int(np.prod(m.block))
    panels = [
        _grid_svg(
            m.block_of,
            lambda i, j: _block_color(
                int(m.block_of[i, j]), int(m.thread_of[i, j]), n_blocks, n_threads
            ),
            f"{m.output}: colour = block, shade = thread (grid {m.grid}, block {m.block})",
            size,
        )
    ]
    for name, steps in m.tiles:
        n = int(steps.max()) + 1 if (steps >= 0).any() else 1
        panels.append(
            _grid_svg(
                steps,
                lambda i, j, s=steps, n=n: _step_color(int(s[i, j]), n),
                f"{name} in block {m.chosen_block}'s shared tile: colour = step (of {n})",
                size,
            )
        )
    cells = "".join(f'<div style="margin:4px 14px 4px 0">{p}</div>' for p in panels)
    return f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{cells}</div>'
