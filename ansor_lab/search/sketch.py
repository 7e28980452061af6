"""Sketch generation: Ansor's rules, each a named, separately testable function.

A sketch is the structure of a program — which stages are inlined, tiled, fused, cached
or rfactored — with its numbers left open. Here a sketch is recorded as a trace whose
sampling instructions (tile sizes, unroll budget, parallel depth, compute locations) are
the open numbers: "random annotation" is replaying it with fresh decisions, and the
evolutionary search mutates those decisions.

Stages are visited consumers first (reverse topological order), as in Ansor. Each rule
has a condition and an application; a rule may offer alternatives (e.g. with and
without a cache-write stage), and every combination becomes one sketch.

One addition to Ansor's CPU rules: the tiling rules also offer each alternative with
its long-row input packed (``+pack(B)``, see ``packable_read``): the outer tile levels of
the axes indexing that input go outermost (j_0 j_1 i_0 i_1 ...), and a contiguous copy
of each column panel is made once there and reused by every row tile, as OpenBLAS packs.
TVM gets the same effect from its matmul tutorial's hand-written packing or from Ansor's
layout rewrite of constant weights; here it is a sketch, searched like everything else,
and the inputs keep their layout. Where the output's rows are short (a 7x7 convolution),
a twin sketch vectorizes the output channels instead, over a weight panel copied
channel-last with ``transform_layout`` (``relayout_read``, ``+pack(kernel, vectorize
ff)``). And a reduction axis of at most ``SMALL_REDUCTION`` iterations (a convolution
window) is not tiled: it runs whole in the innermost reduction level.

Three reduction rules of ours (``sketch_reduction``): ``fuse_rows`` computes the reductions
an output reads per row (a norm's statistics, a softmax's max and sum) inside the output's
row loop; ``vector_rfactor`` keeps a row reduction's partial results in vector lanes
(rfactor onto a vectorized loop, the float reassociation stated in the trace);
``column_reduction`` tiles a reduction along a strided axis around its contiguous one.
The stage predicates the rules read live in ``stage_analysis``; the steps the rules apply
(multi-level tiling, packing, cache write, rfactor) in ``tiling``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..schedule.inlined_reads import effective_consumers
from ..schedule.state import Stage, State, derive_extents
from ..schedule.tir_schedule import Schedule
from .sketch_reduction import (
    column_reduction,
    column_reduction_alts,
    column_thread_alt,
    column_thread_split_alt,
    row_fusion_alts,
    row_fusion_loop,
    row_tiled_alt,
    thread_split_alt,
    vector_reduction,
    vector_rfactor_alt,
)
from .stage_analysis import (  # noqa: F401 - the analysis is part of this module's API
    PACK_MIN_ROW_BYTES,
    VECTOR_ROW,
    fusible_consumer,
    has_branch,
    has_expensive_op,
    is_injective,
    is_strictly_inlineable,
    needs_multi_level_tiling,
    packable_read,
    packed_axes,
    reduce_size,
    relayout_read,
    spatial_size,
    transposed_read,
)
from .tiling import (  # noqa: F401 - the tiling steps and their constants are part of this API
    CPU_STRUCTURE,
    MAX_INNERMOST,
    PADDED_ROWS,
    SMALL_REDUCTION,
    UNROLL_CHOICES,
    apply_cache_write,
    apply_multi_level_tiling,
    apply_pack,
    apply_relayout_pack,
    apply_rfactor,
    apply_transposed_pack,
    awkward_axes,
    split_awkward_innermost,
)

# --------------------------------------------------------------------------------------
# Rules


@dataclass(frozen=True)
class SketchRule:
    """A named sketch rule: when it applies, and the alternatives it offers."""

    name: str
    condition: Callable[[State, Stage], bool]
    # alternatives: each is a function (sch, block) -> None applied on a schedule
    alternatives: Callable[[State, Stage], list]
    skip_rest: bool = True  # when it applies, later rules are not tried on this stage


def _inline_alts(state, st):
    return [("inline", lambda sch, b: sch.compute_inline(sch.get_block(b)))]


def _with_packing(state, st, alts: list) -> list:
    """``alts`` and, where ``st`` has a packable read, each of them packing it too: the
    axes that index the packed input are tiled outermost and the copy is made at their
    second level, so the panel is copied once and reused by all the other outer tiles."""
    tensor, dim = packable_read(state, st), None
    if tensor is None:
        found = transposed_read(state, st)
        if found is None:
            return alts
        tensor, dim = found
    axes = packed_axes(state, st, tensor)
    label = tensor if dim is None else f"{tensor}, transposed"

    def packed(fn):
        def apply(sch, b):
            at = fn(sch, b, outer_axes=axes)
            if dim is None:
                apply_pack(sch, b, tensor, at)
            else:
                apply_transposed_pack(sch, b, tensor, dim, at)

        return apply

    return alts + [(f"{name}+pack({label})", packed(fn)) for name, fn in alts]


def _relayout_twins(state, st, alts: list, tiled_alone: str | None = None) -> list:
    """Where ``st`` has a read to repack (``relayout_read``), a twin of each of ``alts``
    vectorizing that read's axis over a repacked panel. None of ``tiled_alone`` when
    ``st`` is an output: its layout is the function's, so its vectors would be strided."""
    found = relayout_read(state, st)
    if found is None:
        return []
    tensor, dim, axis = found
    name = st.op.axis[axis].var.name
    axes = frozenset({name})

    def relayout(fn):
        def apply(sch, b):
            at = fn(sch, b, outer_axes=axes, vector_axis=name)
            apply_relayout_pack(sch, b, tensor, dim, axis, at)

        return apply

    return [
        (f"{alt}+pack({tensor}, vectorize {name})", relayout(fn))
        for alt, fn in alts
        if not (alt == tiled_alone and state.is_output(st))
    ]


def _mlt_fusion_alts(state, st):
    c = fusible_consumer(state, st)

    def fused(sch, b, outer_axes=frozenset(), vector_axis=None):
        return apply_multi_level_tiling(
            sch, b, fuse_consumer=c.name, outer_axes=outer_axes, vector_axis=vector_axis
        )

    alts = [(f"tile+fuse({c.name})", fused)]
    return _with_packing(state, st, alts) + _relayout_twins(state, st, alts)


def _mlt_alts(state, st):
    def tiled(sch, b, outer_axes=frozenset(), vector_axis=None):
        return apply_multi_level_tiling(sch, b, outer_axes=outer_axes, vector_axis=vector_axis)

    def cached(sch, b, outer_axes=frozenset(), vector_axis=None):
        copy = apply_cache_write(sch, b)
        return apply_multi_level_tiling(
            sch, b, fuse_consumer=copy, outer_axes=outer_axes, vector_axis=vector_axis
        )

    alts = [("tile", tiled), ("cache_write+tile", cached)]
    return _with_packing(state, st, alts) + _relayout_twins(state, st, alts, tiled_alone="tile")


def _padded_alts(state, st, lanes: int) -> list:
    """Padded tiling (``awkward_axes``), with the packing twins, or []."""
    pads = awkward_axes(st, lanes)
    if not pads:
        return []

    def padded(sch, b, outer_axes=frozenset(), vector_axis=None):
        return apply_multi_level_tiling(
            sch, b, outer_axes=outer_axes, vector_axis=vector_axis, padded=pads
        )

    return _with_packing(state, st, [("tile(padded)", padded)])


def _rfactor_alts(state, st):
    return [
        ("skip", lambda sch, b: None),
        ("rfactor(inner)", lambda sch, b: apply_rfactor(sch, b, True)),
        ("rfactor(outer)", lambda sch, b: apply_rfactor(sch, b, False)),
    ]


def window_reduction(state: State, st: Stage) -> bool:
    """A reduction over a small window only (pooling: every reduction axis at most
    ``SMALL_REDUCTION`` long) that no other rule tiles: its default nest runs the window
    innermost, a scalar loop of a few steps per output, nothing to vectorize."""
    op = st.op
    if not op.reduce_axis or not op.axis or op.attrs.get("ansor.rfactor"):
        return False
    extents = derive_extents(st)
    window = [extents.get(iv.var.name) for iv in op.reduce_axis]
    if not all(isinstance(e, int) and e <= SMALL_REDUCTION for e in window):
        return False
    last = extents.get(op.axis[-1].var.name)
    return isinstance(last, int) and last >= 2


def window_reduction_alts(state, st):
    """The default nest, or S R S: the window between two levels of the output's tiles,
    so the innermost loop is the output row's inner tile (vectorized, each window step one
    vector of strided loads into a vector of running results)."""
    return [
        ("skip", lambda sch, b: None),
        ("tile(SRS)", lambda sch, b: apply_multi_level_tiling(sch, b, structure="SRS")),
    ]


def _vector_rfactor_alts(state, st):
    """Partial results in vector lanes (``sketch_reduction``), beside what the later rules
    offer the stage (tiling, Ansor's rfactor) or, where none applies, its default loops."""
    later = RULES[[r.name for r in RULES].index("vector_rfactor") + 1 :]
    rest = next((r for r in later if r.condition(state, st)), None)
    others = rest.alternatives(state, st) if rest is not None else [("skip", lambda sch, b: None)]
    # Ansor's rfactor(inner) is the scalar form of the vector one: it would only add sketches
    return [a for a in others if a[0] != "rfactor(inner)"] + vector_rfactor_alt(state, st)


RULES: list[SketchRule] = [
    SketchRule("always_inline", is_strictly_inlineable, _inline_alts),
    SketchRule(
        "fuse_rows", lambda state, st: row_fusion_loop(state, st) is not None, row_fusion_alts
    ),
    SketchRule(
        "vector_rfactor",
        lambda state, st: vector_reduction(state, st, few_rows=True) is not None,
        _vector_rfactor_alts,
    ),
    SketchRule(
        "multi_level_tiling_with_fusion",
        lambda state, st: (
            needs_multi_level_tiling(state, st) and fusible_consumer(state, st) is not None
        ),
        _mlt_fusion_alts,
    ),
    SketchRule("multi_level_tiling", needs_multi_level_tiling, _mlt_alts),
    SketchRule(
        "add_rfactor",
        lambda state, st: (
            bool(st.op.reduce_axis)
            and spatial_size(st) <= 64
            and reduce_size(st) >= 256
            and len(st.op.reduce_axis) == 1
            and not st.op.attrs.get("ansor.rfactor")
        ),  # never rfactor a block rfactor made
        _rfactor_alts,
    ),
    SketchRule("column_reduction", column_reduction, column_reduction_alts),
    SketchRule("window_reduction", window_reduction, window_reduction_alts),
]


def cpu_rules(num_cores: int, lanes: int = 0) -> list[SketchRule]:
    """``RULES`` for a CPU target with ``num_cores`` cores: a reduction that gets partial
    results in vector lanes may also take them for several rows at once where the rows
    share a vector (a GEMV, ``row_tiled_alt``), and with several cores be split across
    the threads (``thread_split_alt``): searched choices next to the others."""

    def alts(state, st):
        more = row_tiled_alt(state, st)
        if num_cores > 1:
            more += thread_split_alt(state, st, num_cores)
        return _vector_rfactor_alts(state, st) + more

    def column_alts(state, st):
        return (
            column_reduction_alts(state, st)
            + column_thread_alt(state, st)
            + column_thread_split_alt(state, st, num_cores)
        )

    def mlt_alts(state, st):
        return _mlt_alts(state, st) + (_padded_alts(state, st, lanes) if lanes else [])

    replaced = {
        "vector_rfactor": alts,
        "column_reduction": column_alts if num_cores > 1 else None,
        "multi_level_tiling": mlt_alts,
    }
    return [
        SketchRule(r.name, r.condition, replaced[r.name], r.skip_rest)
        if replaced.get(r.name) is not None
        else r
        for r in RULES
    ]


@dataclass
class Sketch:
    """One program structure: the rules applied per stage, and its trace."""

    index: int
    steps: tuple  # ((block, rule, alternative), ...)
    trace: object  # the schedule trace with sampling instructions (no post-processing)

    def describe(self) -> str:
        """One line: which rule did what to which block."""
        done = [f"{b}: {alt}" for b, rule, alt in self.steps if alt != "skip"]
        return "; ".join(done) if done else "default loops"

    def __str__(self) -> str:
        return f"sketch {self.index}: {self.describe()}\n{self.trace}"


def generate_sketches(
    make_schedule: Callable[[], Schedule],
    rules: list[SketchRule] | None = None,
    annotate: Callable[[Schedule], None] | None = None,
    dropped: Counter | None = None,
) -> list[Sketch]:
    """Apply the rules to fresh schedules; one Sketch per combination of alternatives.

    Conditions are evaluated on the state as earlier stages' rules left it, so that
    e.g. a consumer that was inlined is no longer a fusion candidate.

    A combination whose rule or annotation step is refused is dropped and counted in
    ``dropped`` (by ``"sketch: <ErrorClass>"``): one refused step never ends generation.
    The list is never empty: when every combination is refused, the default loop nest
    (annotated, or bare if even that is refused) is the one sketch.
    """
    rules = RULES if rules is None else rules
    dropped = Counter() if dropped is None else dropped
    sketches: list[Sketch] = []
    seen: set = set()
    # prefixes of (block, rule, alt name, fn) choices, one more stage each level, each with
    # the schedule its prefix but the last choice left (shared by siblings, copied before
    # use): a prefix costs one rule application, not a replay of the whole prefix
    level: list = [([], None)]
    pending: list = []
    while level or pending:
        if not pending:  # the next stage's prefixes, thinned where the combinations explode
            pending, level = _thinned(level, MAX_PREFIXES), []
        prefix, parent = pending.pop(0)
        sch = make_schedule() if parent is None else parent.copy()
        try:
            if prefix:
                block, _, _, fn = prefix[-1]
                fn(sch, block)
        except Exception as e:  # noqa: BLE001 - counted by class: a bug shows, never ends it
            dropped[f"sketch: {type(e).__name__}"] += 1
            continue
        done = {b for b, _, _, _ in prefix}
        remaining = [
            st
            for st in reversed(sch.state.compute_stages())
            if st.name not in done and not st.is_inlined
        ]
        nxt = None
        for st in remaining:
            for rule in rules:
                if rule.condition(sch.state, st):
                    nxt = [
                        (st.name, rule.name, name, fn)
                        for name, fn in rule.alternatives(sch.state, st)
                    ]
                    break
            if nxt:
                break
            done.add(st.name)
        if nxt:
            level.extend((prefix + [opt], sch) for opt in nxt)
            continue
        key = tuple((b, r, a) for b, r, a, _ in prefix)
        if key in seen:
            continue
        if annotate is not None:
            try:
                annotate(sch)
            except Exception as e:  # noqa: BLE001 - counted by class: a bug shows, never ends it
                dropped[f"annotate: {type(e).__name__}"] += 1
                continue
        seen.add(key)
        sketches.append(Sketch(len(sketches), key, sch.trace.copy()))
    if not sketches:
        sketches.append(_default_sketch(make_schedule, annotate, dropped))
    return sketches


#: Most prefixes one level of sketch generation extends. The combinations multiply per
#: stage with a choice (a row reduction has three: rfactor into lanes two ways, or not):
#: a topk by three selection rounds, six such stages, gave 732 sketches in 299 s, and a
#: chain of eight row sums would give 3^8. Past this many, an evenly spaced subset goes
#: on (every earlier choice stays represented). The benches' operators stay under it; the
#: fuzzers' topk by two rounds (84 combinations) and five chained row sums are thinned.
MAX_PREFIXES = 32


def _thinned(prefixes: list, most: int) -> list:
    """``prefixes`` if there are at most ``most``, else ``most`` of them evenly spaced
    (first and last kept): deterministic, so a log's sketch indices replay."""
    if len(prefixes) <= most:
        return prefixes
    step = (len(prefixes) - 1) / (most - 1)
    return [prefixes[round(i * step)] for i in range(most)]


def _default_sketch(make_schedule, annotate, dropped: Counter) -> Sketch:
    """The untransformed loop nest, annotated where the annotation is accepted."""
    sch = make_schedule()
    if annotate is not None:
        try:
            annotate(sch)
        except Exception as e:  # noqa: BLE001 - counted by class: a bug shows, never ends it
            dropped[f"annotate: {type(e).__name__}"] += 1
            sch = make_schedule()
    return Sketch(0, (), sch.trace.copy())


def annotate_sampling(
    sch: Schedule,
    num_cores: int,
    *,
    compute_location: bool = True,
    parallel_vectorize_unroll: bool = True,
) -> None:
    """Ansor's random annotation, as sampling instructions recorded in the sketch.

    Root stages get a sampled unroll budget and (with several cores) a sampled number of
    outer loops to fuse and parallelize; stages left untiled get a sampled compute
    location, and a sampled split of their innermost loop to vectorize. The keywords turn
    off one part (MetaSchedule's RandomComputeLocation / ParallelizeVectorizeUnroll rules
    chosen by a custom ``PostOrderApply(sch_rules=...)``).
    """
    state = sch.state

    def annotate_root_steps(name: str) -> None:
        b = sch.get_block(name)
        probs = [1.0 / len(UNROLL_CHOICES)] * len(UNROLL_CHOICES)
        sch.annotate(b, "ansor.unroll", sch.sample_categorical(list(UNROLL_CHOICES), probs))
        if num_cores > 1:
            depth = sch.sample_categorical([1, 2, 3], [0.4, 0.4, 0.2])
            sch.annotate(b, "ansor.parallel", depth)

    for st in list(state.compute_stages()):
        if st.is_inlined:
            continue
        tiled = any(r for r in st.relations)
        annotated = False
        if not tiled and st.is_root and compute_location:
            consumers = effective_consumers(state, st.name)
            if len(consumers) == 1 and not state.is_output(st):
                # its unroll and parallel decisions come first, while it is at the root:
                # a later sample (or mutation) may put it back there, where postproc reads
                # them, whatever place this one draws (without them a group norm's second
                # pass, sampled to the root, ran serial on two cores: 0.98x PyTorch)
                if parallel_vectorize_unroll:
                    annotate_root_steps(st.name)
                    annotated = True
                loc = sch.sample_compute_location(sch.get_block(st.name))
                sch.compute_at(sch.get_block(st.name), loc)
        st = sch.state.stage(st.name)
        if st.is_inlined or not parallel_vectorize_unroll:
            continue
        if not tiled:
            inner = st.leaves[-1] if st.leaves else None
            # the extent is read from the state (as sample_perfect_tile does), not through
            # get_loops: that would record two trace steps in every sketch for nothing
            extent = derive_extents(st)[inner] if inner is not None else 0
            if inner is not None and st.iters[inner].kind == "spatial" and extent > MAX_INNERMOST:
                loop = sch.get_loops(sch.get_block(st.name))[-1]
                if not split_awkward_innermost(sch, loop, extent):
                    tiles = sch.sample_perfect_tile(loop, n=2, max_innermost_factor=MAX_INNERMOST)
                    sch.split(loop, tiles)
        if st.is_root and not annotated:
            annotate_root_steps(st.name)
