"""An analytic prior: how well a lowered CPU program should use the SIMD units.

Before the first measurement the cost model knows nothing, and Ansor's first batch is
random. On a CPU most of a tensor program's speed is decided by its innermost register
tile, which can be judged without running anything. For every store statement this
module reads the loops inside its innermost reduction loop (the register tile) and
estimates the share of peak it can reach:

* lanes: a vectorized innermost loop fills ``extent / (lanes * ceil(extent / lanes))``
  of its vectors; a scalar store uses one lane of ``lanes``;
* latency: a fused multiply-add has a latency of several cycles, so a tile with fewer
  independent accumulators than ``LATENCY_ACCUMULATORS`` leaves the unit idle, unless
  the reduction loop is short enough that the core overlaps the independent iterations
  of the spatial loops around it (``OOO_WINDOW``);
* registers: a tile with more accumulators than the register file holds spills;
* loads: every reduction step loads each operand once per distinct element of the tile
  (one vector when it is contiguous along the vectorized loop, two when that vector
  straddles a cache line, a broadcast when it does not depend on it, a span and a
  shuffle 2-4 elements apart, one element per lane otherwise); the core issues one load per
  multiply-add (two load ports, two multiply-add units); a store that is not contiguous
  along the vector scatters;
* round trips: the tile is loaded and stored around every run of reduction loops (the
  reduction loops right around it, taken together: LLVM keeps the accumulators in
  registers across all of them), so a short run spends its time moving accumulators;
* unrolling: the tile stays in registers only when the loops around its vector are
  unrolled (explicitly or within the auto-unroll budget), and a body unrolled past a
  few hundred vector operations runs slower (measured: a 512-step unrolled matmul tile
  ran at a third of the same tile unrolled 8 steps);
* parallelism: an outer parallel loop whose extent does not divide among the cores.

A program's score is its flop-weighted harmonic mean (total work over total estimated
time), in (0, 1]. With the machine's balance (``measure.bandwidth.machine_balance``: the
measured read bandwidth over the measured multiply-add peak, in bytes per flop) the
estimated time is never below the time to read and write every argument once at that
bandwidth: a memory-bound program (a GEMV, an elementwise chain) whose loops would run
faster than its bytes arrive scores as what the memory allows, and its variants tie
there instead of being ranked by register tiles that cannot matter. The search ranks
candidates by it until the cost model has data; cache behaviour and everything else is
left to the model.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen.access import flat_index, load_stride, strided_load_ok, vector_chunks
from ..dsl import dtypes, expr as E
from ..dsl.dag import EXPENSIVE_CALLS
from ..ir import nodes as N
from ..ir.index_values import evaluate
from ..ir.simplify import linear_form
from ..ir.visitor import child_stmts, walk_stmts
from .loopnest import LoopNestWalker
from .stage_analysis import gathers_along

#: Independent accumulators needed to hide the multiply-add latency.
LATENCY_ACCUMULATORS = 8
#: Vector registers kept free of accumulators (operands, addresses).
RESERVED_REGISTERS = 4
#: Reduction steps' worth of time one load + store of the register tile costs.
TILE_ROUND_TRIP = 4.0
#: Vector operations an unrolled body holds before its size starts to cost.
UNROLLED_BODY = 128
#: Loads the core issues per multiply-add: two load ports beside two multiply-add units.
#: (At 2.0, a one-vector-wide tile of a 1x1 convolution, 15 loads per 14 multiply-adds,
#: ranked first and ran at 0.8x the two-vector tiles, 16 loads per 28.)
LOADS_PER_FMA = 1.0
#: Share of a multiply-add's time each load of the tile costs below that bound (the
#: broadcast, the address, the port the round trip's stores share). Fitted on BERT's
#: 128x768x768 matmul, one thread, CPU clock, same run: register tiles 8x48 (11 loads per
#: 24 multiply-adds), 4x64 (8 / 16), 8x32 (10 / 16), 4x32 (6 / 8) ran at 179, 167, 165,
#: 153 GFLOPS, all ranked alike without it.
LOAD_SHARE = 0.5
#: Vector operations of a vectorized transcendental (range reduction + polynomial, as
#: ``codegen/vector_math`` emits exp) in units of one add.
MATH_CALL_OPS = 16.0
#: (sin, cos... are libm calls per lane: costlier still, ranked alike)
TRANSCENDENTAL = EXPENSIVE_CALLS - {"sqrt", "rsqrt"}
#: Calls that pick one of their operands (a padded copy's bounds select): data movement
SELECTS = frozenset({"if_then_else", "tir.if_then_else", "select"})
#: (bytes, price): a buffer larger than ``bytes`` is read from (or written to) the next
#: level each time a root loop nest walks it, at ``price`` per element in units of one
#: vector-lane operation at peak (AVX-512, 2 vector ops per cycle: 32 lanes a cycle; one
#: core streams ~3 floats a cycle from L3/DRAM and ~16 from L2). This is what a row
#: fusion saves: a softmax's row read once from memory, then from L1.
CACHE_TIERS = ((1 << 20, 12.0), (48 << 10, 2.0))
#: Multiply-adds ahead in which the out-of-order core finds independent work (fitted on
#: ~1,500 measured programs: 16-64 rank about alike, 128 and more worse).
OOO_WINDOW = 32
#: Register-tile points up to which an operand's distinct elements are enumerated.
DISTINCT_ENUMERATION = 4096
#: Share of the free registers a register tile of odd-width vectors (not a whole number of
#: 16-byte vectors: 14 float lanes; 12 or 28 split into legal vectors) keeps unspilled.
#: Past it LLVM spills them lane by lane: a depthwise convolution's 7-row x 14-lane tile
#: on AVX2 (14 accumulators for 12 free registers) built 560 single-lane inserts and ran
#: at 609 us, 5x its 121 us 1-row tiles, which the prior ranked below it; on AVX-512 the
#: 28-row x 14-lane tile (28 accumulators, exactly the free registers) moved zmm
#: registers through the stack 506 times and ran 3.3x slower than 4 rows.
ODD_WIDTH_ROOM = 0.5
#: Steps of the innermost reduction loops that end up straight code (LLVM fully unrolls
#: such short loops itself, whatever the unroll budget): a convolution's 3x3 window.
WINDOW_STEPS = 16


class _PriorWalker(LoopNestWalker):
    def __init__(
        self,
        lanes: int,
        registers: int,
        cores: int,
        min_lanes: int = 4,
        masks: bool = False,
        written: frozenset = frozenset(),
    ) -> None:
        super().__init__()
        #: the target masks vector accesses (AVX-512); ``written``: buffers the function
        #: stores to (their odd-width loads stay plain, see ``_row_moves``)
        self.masks = masks
        self.written = written
        self.lanes = max(1, lanes)
        #: lanes of the narrowest vector register (16 bytes): widths made of whole ones
        #: split into legal vectors
        self.min_lanes = max(1, min_lanes)
        self.registers = registers
        self.cores = max(1, cores)
        self.work = 0.0
        #: elements moved by stores that compute nothing (copies, padding, packing): time,
        #: and the program's work only when nothing else computes (a transpose)
        self.moved = 0.0
        self.time = 0.0
        #: (root loop, buffer) pairs: each loop nest at the root streams a buffer it
        #: touches at least once; stores fused under one root loop share the stream
        self.streams: set = set()
        self._stores_in: list[int] = []  # per loop of ``loops``: stores in its body
        self._counts: dict = {}

    def visit(self, s: N.Stmt) -> None:
        """Walk ``s``, keeping per enclosing loop how many stores its body holds."""
        if isinstance(s, N.For):
            self._stores_in.append(_store_count(s.body, self._counts))
            super().visit(s)
            self._stores_in.pop()
        else:
            super().visit(s)

    def _note_streams(self, s: N.BufferStore) -> None:
        root = self.loops[0].var if self.loops else None
        for buf in {s.buffer, *(ld.buffer for ld in _loads_of(s))}:
            self.streams.add((root, buf))

    def memory_time(self, elem_bytes: int) -> float:
        """Time (in the walker's units) the streams take: a buffer larger than the
        ``CACHE_TIERS`` level it falls out of costs that tier's price per element, once
        per root loop nest that touches it."""
        total = 0.0
        for _, buf in self.streams:
            size = buf.nbytes
            for limit, cost in CACHE_TIERS:
                if size > limit:
                    total += size / max(1, elem_bytes) * cost
                    break
        return total

    def store(self, s: N.BufferStore) -> None:
        self._note_streams(s)
        kept = [(lp, n) for lp, n in zip(self.loops, self._stores_in) if lp.extent > 1]
        loops = [lp for lp, _ in kept]
        trips = math.prod(lp.extent for lp in loops)
        written = set()
        for i in s.indices:
            written |= E.free_vars(i)
        # loops the stored element does not depend on are reduction loops only when the
        # store accumulates (reads its own buffer); otherwise they recompute the same values
        # (a producer computed inside its consumer's loops), and ``trips`` already counts them
        accumulates = any(
            isinstance(n, N.BufferLoad) and n.buffer is s.buffer for n in E.post_order(s.value)
        )
        reduction = [k for k, lp in enumerate(loops) if accumulates and lp.var not in written]
        if reduction and loops[reduction[-1]].horizontal and reduction[-1] == len(loops) - 1:
            self._horizontal(s, loops, trips)  # a tree of shuffles, not a scalar chain
            return
        tile = loops[reduction[-1] + 1 :] if reduction else loops[-1:]
        vec = tile[-1] if tile and tile[-1].kind == "vectorized" else None
        # accumulators (or results) in flight: one per vector of the tile
        per_vector = math.ceil(vec.extent / self.lanes) if vec else 1
        around = math.prod(lp.extent for lp in tile if lp is not vec)
        accumulators = around * per_vector
        eff = vec.extent / (self.lanes * per_vector) if vec else 1.0 / self.lanes
        if reduction:
            # the accumulators stay in registers across the whole run of reduction loops
            # right around the tile (LLVM promotes them: their address does not change), so
            # the round trip and the latency are paid per run, not per innermost loop: a
            # convolution's 3-step window loop inside its channel loop is one long run
            # (a run ends at a loop whose body computes another stage too: its stores
            # between the multiply-adds keep LLVM from holding the accumulators across it)
            first = reduction[-1]
            while first > 0 and first - 1 in reduction and kept[first - 1][1] == 1:
                first -= 1
            steps = math.prod(lp.extent for lp in loops[first : reduction[-1] + 1])
            # iterations of the spatial loops right around the run of reduction loops are
            # independent: when one is short, the out-of-order core overlaps several
            around_free = 1
            for lp in reversed(loops[:first]):
                if lp.var not in written:
                    break
                around_free *= lp.extent
            overlap = min(around_free, max(1, OOO_WINDOW // (accumulators * steps)))
            latency = min(1.0, accumulators * overlap / LATENCY_ACCUMULATORS)
            room = self.registers - RESERVED_REGISTERS
            if accumulators > room:
                eff *= (room / accumulators) ** 2
            else:
                # a sliding window (rows ``i + di`` of a depthwise convolution) unrolled
                # reads each element at several steps: LLVM loads it once and keeps it live
                window = self._window_vectors(
                    s, loops[first : reduction[-1] + 1], tile, vec, accumulators
                )
                if accumulators + window > room:
                    eff *= room / (accumulators + window)
            odd_room = int(room * ODD_WIDTH_ROOM)
            if vec is not None and vec.extent % self.min_lanes and accumulators > odd_room:
                # a width no whole number of 16-byte vectors makes (14 lanes: LLVM's
                # <14 x float>): such accumulators spill early, lane by lane
                eff *= (odd_room / accumulators) ** 2
            unrolled = _unrolled_steps(loops)
            if around > unrolled:
                eff *= 0.5  # the tile's loops stay loops: accumulators go through memory
            if kept[reduction[-1]][1] > 1:
                # another stage computed inside the reduction (a padded input copied in
                # the register tile): its stores sit between the multiply-adds and the
                # accumulators go through memory (such programs ran at 0.13-0.45x)
                eff *= 0.5
            body = unrolled * per_vector
            if body > UNROLLED_BODY:  # a long straight-line body thrashes the decoders
                eff *= (UNROLLED_BODY / body) ** 0.7
            # the tile is read and written back around each run of the reduction loop:
            # a short one spends its time on that round trip, not on multiply-adds
            eff *= steps / (steps + TILE_ROUND_TRIP)
            if vec is not None and self._gathers(s, vec):
                eff /= 2.0  # the round trip scatters the tile: one element per lane
            loads = sum(self._loads(ld, tile, vec) for ld in _loads_of(s))
            ports = min(1.0, LOADS_PER_FMA * accumulators / max(loads, 1.0))
            # below that bound loads still cost: fewer per multiply-add run faster
            ports /= 1.0 + LOAD_SHARE * loads / max(accumulators, 1)
            # the multiply-add latency and the ports are two bounds on one loop: the
            # tighter one sets its speed (a lone accumulator waits on its chain, whatever
            # its loads)
            eff *= min(latency, ports)
        elif vec is not None and (
            self._gathers(s, vec) or any(_gathered(x, vec, self.lanes) for x in _loads_of(s))
        ):
            eff /= 4.0  # a gather or a scatter: one element per lane
        par = [lp for lp in loops if lp.kind == "parallel"]
        if self.cores > 1:
            ext = math.prod(lp.extent for lp in par) if par else 1
            eff *= ext / (self.cores * math.ceil(ext / self.cores))
        flops = float(_flops(s) * trips)
        weight = max(flops, float(trips))
        self.work += flops
        if not flops:
            self.moved += weight
        self.time += weight / max(eff, 1e-6)

    def _horizontal(self, s: N.BufferStore, loops: list, trips: int) -> None:
        """A horizontal step emitted as a tree (``codegen.horizontal_reduce``): one vector
        load and log2 L rounds of shuffle + combine for L partial results, where a scalar
        chain would wait L times on the adder's latency."""
        n = loops[-1].extent
        ideal = max(1.0, n / self.lanes)  # vector operations a perfect reduction needs
        spent = 2.0 * math.log2(max(n, 2)) + 3.0  # shuffles, combines, load, store
        weight = max(float(_flops(s) * trips), float(trips))
        self.work += weight
        self.time += weight / min(1.0, ideal / spent)

    def _window_vectors(
        self, s: N.BufferStore, run: list, tile: list, vec, accumulators: int = 1
    ) -> float:
        """Operand vectors live across a short run of reduction loops (straight code once
        unrolled, by the budget or by LLVM) that reads the same elements at several steps.
        LLVM unrolls the window's loops only while the body stays within
        ``UNROLLED_BODY`` multiply-adds (``accumulators`` per step): a grouped
        convolution's 16-accumulator tile keeps its 3-step inner loop as straight code,
        not the 9-step window (counted whole, its 8 x 28 tiles ranked 0.7x the 4 x 28
        tiles they ran 1.14x faster than).

        A depthwise convolution's 7-row x 14-lane tile under its 3x3 window reads 9 rows x
        3 shifts = 27 vectors, each at up to 3 steps: with its 7 accumulators, 34 live
        vectors in 28 free registers; the 7 x 28 tile needs 68. Measured on one thread:
        4 x 14 ran at 25 us, 7 x 14 at 34, 7 x 28 at 53-60 (spilling), all ranked the other
        way round without this (``room / live`` matches those ratios). Broadcast
        operands are left out: counted, they ranked a dilated convolution's packed
        tiles (vectors along the output channels, the fastest) 0.6x down."""
        window, steps = [], 1
        for lp in reversed(run):
            if steps * lp.extent > WINDOW_STEPS or steps * lp.extent * accumulators > UNROLLED_BODY:
                break
            window.append(lp)
            steps *= lp.extent
        total = 0.0
        for ld in _loads_of(s) if window else ():
            used = _index_vars(ld)
            if vec is None or vec.var not in used:
                continue  # a broadcast: folded into the multiply-adds, no register held
            rows = [lp for lp in tile if lp is not vec and lp.var in used]
            shifts = [lp for lp in window if lp.var in used]
            every = math.prod(lp.extent for lp in rows + shifts)
            if not rows or not shifts or every > DISTINCT_ENUMERATION:
                continue
            distinct = _enumerate(ld.indices, rows + shifts)
            # elements shared between steps (not only between the rows of one step: a
            # grouped convolution's channels of one group read the same vector at a step,
            # used then and dead; counted live, its 2-channel x 28-lane tiles ranked 0.4x
            # the 4 x 28 tiles they ran 1.4x faster than)
            shift_steps = math.prod(lp.extent for lp in shifts)
            if distinct < every and distinct < _distinct(ld.indices, rows) * shift_steps:
                total += distinct * math.ceil(vec.extent / self.lanes)
        return total

    def _loads(self, ld: N.BufferLoad, tile: list, vec) -> float:
        """Vector loads (or broadcasts, or lane loads) of one operand per reduction step."""
        used = _index_vars(ld)
        n = float(_distinct(ld.indices, [lp for lp in tile if lp is not vec and lp.var in used]))
        if vec is not None and vec.var in used:
            step, form = _lane_step(ld, vec)
            if step == 1:  # contiguous: a load that straddles a cache line is two
                share = self._split_share(form, ld.buffer.dtype, vec)
                untied = self.masks and ld.buffer not in self.written
                n *= self._row_moves(vec.extent, untied) * (1.0 + share)
            elif step and _span_load(step, ld.buffer.dtype, vec, self.lanes):
                n *= math.ceil(vec.extent * step / self.lanes) + 1  # the span, a shuffle
            elif step != 0:  # a gather (step 0: every lane reads one element)
                n *= vec.extent
        return n

    def _register_pieces(self, extent: int) -> list[tuple[int, int]]:
        """(offset, width) of the registers a row of ``extent`` lanes is moved in:
        codegen's chunks (``vector_chunks``), each cut into vectors of the target."""
        return [
            (off + at, min(self.lanes, width - at))
            for off, width in vector_chunks(extent, self.lanes)
            for at in range(0, width, self.lanes)
        ]

    def _row_moves(self, extent: int, untied: bool = False) -> int:
        """Instructions that load a contiguous row of ``extent`` lanes into registers.

        A register piece whose width is no power of two is loaded as its power-of-two
        parts joined by inserts (LLVM widens the vector but may not read past its end):
        on AVX2 a 14-lane row is 8 + 6 and the 6 is a 4-lane load, a 2-lane load and a
        ``vinsertf128``, four instructions where ``ceil(14 / 8)`` counts two. A depthwise
        convolution's 2-channel x 14-lane tile, ranked above the 1 x 28 tile, ran 2x
        slower: its text holds 407 vector memory operations for 36 multiply-adds, the
        1 x 28 tile's 354 for 72. ``untied``: a read-only buffer on a target with masks,
        where codegen loads the piece as one masked instruction (``whole_width``)."""
        pieces = self._register_pieces(extent)
        if untied:
            return len(pieces)
        return sum(2 * bin(w).count("1") - 1 for _, w in pieces)

    def _split_share(self, form: tuple, dtype: str, vec) -> float:
        """Share of a contiguous operand's vector loads that straddle a 64-byte cache
        line (two loads each), over the values of the loops around; buffers start
        line-aligned. A depthwise convolution's 4 x 14-lane tile reading a padded copy
        of its own (rows of 16 floats: every shifted 14-lane load inside one line) ran
        at 22 us, the same tile reading a padded channel (rows of 30 floats) at 41; the
        prior ranked them alike, and over 2,638 measured programs of 19 operators this
        raised the mean rank correlation from 0.47 to 0.50 (depthwise: 0.53 to 0.74, the
        fastest of the prior's first five programs 1.38x to 1.04x the fastest of all)."""
        line = max(1, 64 // max(1, dtypes.itemsize(dtype)))
        terms, const = form
        extents = {lp.var: lp.extent for lp in self.loops}
        residues = {int(const) % line} if isinstance(const, int) else set(range(line))
        for var, coeff in terms.items():
            if var is vec.var:
                continue
            if not isinstance(var, E.Var) or not isinstance(coeff, int) or var not in extents:
                residues = set(range(line))
                break
            steps = {coeff * k % line for k in range(min(extents[var], line))}
            residues = {(r + d) % line for r in residues for d in steps}
        pieces = self._register_pieces(vec.extent)
        split = sum((r + at) % line + width > line for r in residues for at, width in pieces)
        return split / (len(residues) * len(pieces))

    @staticmethod
    def _gathers(ld: N.BufferLoad | N.BufferStore, vec) -> bool:
        """Whether an access's elements along the vectorized loop are not contiguous."""
        return gathers_along(ld.indices, vec.var)


def _lane_step(ld: N.BufferLoad, vec) -> tuple:
    """(elements between the lanes of a load along ``vec``, or None where that is not a
    constant; the linear form of its flat index): what codegen reads its access kind from
    (``codegen.access.load_stride``)."""
    form = linear_form(flat_index(ld.buffer, ld.indices))
    return load_stride(form, vec.var, {vec.var}), form


def _span_load(step: int | None, dtype: str, vec, register_lanes: int) -> bool:
    """Whether codegen reads lanes ``step`` elements apart as one span and a shuffle
    (``codegen.access.strided_load_ok``: 2-4 apart, a stride-2 convolution's or pooling's
    input). Counted as a gather (one load per lane), a stride-2 depthwise convolution's
    8-lane tiles ranked below 2-lane ones that ran 2.1x slower."""
    lanes = max(width for _, width in vector_chunks(vec.extent, register_lanes))
    return step is not None and strided_load_ok(step, dtype, lanes)


def _gathered(ld: N.BufferLoad, vec, register_lanes: int) -> bool:
    """Whether a load inside ``vec`` reads its lanes element by element."""
    step = _lane_step(ld, vec)[0]
    return step not in (0, 1) and not _span_load(step, ld.buffer.dtype, vec, register_lanes)


def _index_vars(ld: N.BufferLoad) -> set:
    """The variables an access's indices use."""
    return set().union(*(E.free_vars(i) for i in ld.indices))


def _distinct(indices: tuple, loops: list) -> int:
    """Distinct elements ``indices`` reach over ``loops`` (every other variable held at 0).

    The product of the extents, unless a loop enters an index through a division or a
    modulo: a grouped convolution reads input channel ``ff // 4 * 4 + rc``, so the four
    output channels of one group in a register tile share each input vector (counted once
    per channel, a tile of 8 channels looked 4 times as load-bound as it is, and the search
    kept tiles of one channel: 1.66x between seeds). Such indices are enumerated.
    """
    full = math.prod(lp.extent for lp in loops)
    if full <= 1 or full > DISTINCT_ENUMERATION or all(_linear(i) for i in indices):
        return full
    return _enumerate(indices, loops)


def _enumerate(indices: tuple, loops: list) -> int:
    """Distinct values of the tuple ``indices`` over every point of ``loops`` (others 0)."""
    full = math.prod(lp.extent for lp in loops)
    grids = np.meshgrid(*[np.arange(lp.extent) for lp in loops], indexing="ij")
    env = {lp.var: g.ravel() for lp, g in zip(loops, grids)}
    cols = [np.broadcast_to(np.asarray(evaluate(i, env)), (full,)) for i in indices]
    return len(np.unique(np.stack(cols, axis=1), axis=0))


def _linear(e: E.PrimExpr) -> bool:
    """Whether ``e`` is a sum of variables times constants."""
    form = linear_form(e)
    return form is not None and all(isinstance(t, E.Var) for t in form[0])


def _store_count(s: N.Stmt, memo: dict) -> int:
    """Stores in ``s`` (memoized by node, and summed from the children's counts: the
    walker asks once per enclosing loop, and a walk per loop cost depth x size)."""
    key = id(s)
    got = memo.get(key)
    if got is None:  # statements only: a store is never inside an expression
        got = int(isinstance(s, N.BufferStore)) + sum(_store_count(c, memo) for c in child_stmts(s))
        memo[key] = got
    return got


def _flops(s: N.BufferStore) -> float:
    """Arithmetic operations of one execution of ``s``; a transcendental call counts as
    the ``MATH_CALL_OPS`` vector operations its polynomial takes (a softmax's cost is its
    exp: vectorized badly, it is the program's time)."""
    total = 0.0
    for n in _value_nodes(s.value):
        dt = getattr(n, "dtype", None)
        if isinstance(dt, str) and (dt.startswith(("int", "uint")) or dtypes.is_bool(dt)):
            continue  # index arithmetic and bounds tests: addresses, not work
        if isinstance(n, E.Call) and n.op not in SELECTS:
            total += MATH_CALL_OPS if n.op in TRANSCENDENTAL else 1.0
        elif isinstance(n, (E.Add, E.Sub, E.Mul, E.Div)):
            total += 1.0
    return total


def _value_nodes(e: E.PrimExpr) -> list:
    """The nodes of ``e`` that compute values: a load's index arithmetic is address
    computation (folded into the addressing modes, hoisted out of loops), not work. Counted
    as work, a dilated convolution's ``y + 2 * ry`` made its multiply-add weigh 18 times a
    copy, and a padded copy (its bounds tests, its select) recomputed inside the register
    tile looked like useful work."""
    out: list = []
    stack = [e]
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, N.BufferLoad):
            stack.extend(E.children(n))
    return out


def _unrolled_steps(loops: list) -> int:
    """Iterations of the innermost loops that end up unrolled (a vector loop is one step).

    Mirrors the auto-unroll pass: loops are unrolled from the innermost outward while the
    product of their extents stays within the budget; explicitly unrolled loops always are.
    """
    steps = 1
    for lp in reversed(loops):
        if lp.kind == "vectorized":
            continue
        if lp.kind == "unrolled" or steps * lp.extent <= lp.unroll_budget:
            steps *= lp.extent
        else:
            break
    return steps


def _loads_of(s: N.BufferStore) -> list:
    return [
        n for n in E.post_order(s.value) if isinstance(n, N.BufferLoad) and n.buffer is not s.buffer
    ]


def compulsory_bytes(func: N.PrimFunc) -> int:
    """Bytes of the function's argument buffers: each is read or written at least once."""
    total = 0
    for p in func.params:
        if isinstance(p, N.Buffer):
            total += math.prod(p.shape) * dtypes.itemsize(p.dtype)
    return total


def analytic_score(
    func: N.PrimFunc,
    vector_bytes: int = 64,
    cores: int = 1,
    elem_bytes: int = 4,
    balance: float | None = None,
) -> float:
    """Estimated share of the CPU's peak a lowered program can reach, in (0, 1].

    ``vector_bytes`` is the SIMD register width (64 for AVX-512, 32 for AVX2), which also
    decides the register file (32 or 16 vector registers); ``cores`` the thread count;
    ``balance`` the bytes per flop the memory delivers at the cores' peak (None: no
    memory bound).
    """
    lanes = max(1, vector_bytes // elem_bytes)
    written = frozenset(n.buffer for n in walk_stmts(func.body) if isinstance(n, N.BufferStore))
    wide = vector_bytes >= 64
    walker = _PriorWalker(lanes, 32 if wide else 16, cores, 16 // elem_bytes, wide, written)
    walker.visit(func.body)
    time = walker.time + walker.memory_time(elem_bytes) * lanes / 16
    if time <= 0:
        return 1.0
    if balance:  # in the same unit as ``time``: work done at peak in that time
        time = max(time, compulsory_bytes(func) / balance)
    # a copy is time, not work, where the program computes: a padded input recomputed
    # inside a convolution's register tile (950 M element copies for its 58 M
    # multiply-adds) once counted as work and kept the score at 0.87; it ran at 13 GFLOPS
    work = walker.work or walker.moved
    return min(1.0, work / time)
