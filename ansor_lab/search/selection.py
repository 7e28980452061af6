"""Picking what to measure so that a small budget is not a lottery.

With 64 trials a search has four batches of 16, and which programs it ends with depended
on the seed: two searches of ResNet-50's last conv gave 163 and 132 GFLOPS (issue 21).
Three rules here make the choice depend less on chance, each a pure function of the
candidates and their scores (``SketchPolicy.next_batch`` and the tuning loop use them):

- **diverse_top**: the batch's best-ranked candidates, each at least ``min_diff``
  decisions away from those already taken (in the same sketch), the best of each program
  structure first (``program_structure``: the register tile, and where each stage is
  computed). Ranked by the analytic prior, the first batch otherwise
  holds a dozen near-copies of one tiling: if the prior misjudged that tiling, the cost
  model learns from one point and the seed is lost.
- **hedge_picks**: while the forest has seen few programs it extrapolates from a handful
  of points; part of each batch is then ranked by the analytic prior instead, among the
  candidates the evolution found (the forest's mistakes and the prior's are different).
- **finalists**: in the last batch, the measured programs within ``margin`` of the best
  are measured again (each keeps the fastest of its measurements: load on the machine only
  ever slows a run down); a program that was unlucky once still wins.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def decision_distance(a: Any, b: Any) -> float:
    """How many sampled decisions differ between two candidates (inf across sketches)."""
    if a.sketch != b.sketch or len(a.decisions) != len(b.decisions):
        return math.inf
    return sum(1 for x, y in zip(a.decisions, b.decisions) if x != y)


def register_tile(cand: Any) -> tuple:
    """The sketch and the innermost factor of each tile decision: the register tile and
    the vector width. Two candidates that differ only in their outer factors are
    near-copies to a first batch; a different register tile is a different program."""
    inner = tuple(d[-1] for d in cand.decisions if isinstance(d, (list, tuple)) and d)
    return (cand.sketch, inner)


def location_kind(decision: Any) -> str:
    """A compute-location decision as the program structure it gives: ``"inline"`` (-2),
    ``"root"`` (-1) or ``"at"`` (inside a loop of its consumer: which loop is a tiling
    matter, as the outer tile factors are)."""
    return {-2: "inline", -1: "root"}.get(decision, "at")


def program_structure(cand: Any, locations: Sequence[int] = ()) -> tuple:
    """``register_tile`` and the kind of each compute location (``location_kind``; the
    decisions at the positions ``locations``). A depthwise convolution's padding inlined
    into its loads, copied per tile or copied at the root are three programs: five seeds of
    it at 64 trials ran 95-154 us, and the three slow ones had measured the inlined padding
    once or twice, each time under a poor tile, and never came back to it."""
    kinds = tuple(location_kind(cand.decisions[p]) for p in locations if p < len(cand.decisions))
    return (*register_tile(cand), kinds)


def diverse_top(
    ranked: Sequence[Any],
    n: int,
    min_diff: int,
    seen: set,
    max_scan: int | None = None,
    tiles: int = 0,
    score: Callable[[Any], float | None] | None = None,
    tile_margin: float = 0.9,
    structure: Callable[[Any], tuple] = register_tile,
) -> list:
    """Up to ``n`` of ``ranked`` (best first) not in ``seen``: first the best-ranked of
    each ``structure`` (``register_tile``, or ``program_structure``) not yet taken, for up
    to ``tiles`` picks among those ``score`` puts within ``tile_margin`` of the best (all,
    without ``score``); then candidates at least ``min_diff`` decisions from every one
    taken; where too few are that far apart, the best-ranked of the rest fill the batch.
    Adds the picks' keys to ``seen``.

    The register-tile picks are for near-ties: the prior scores a 4 x 4 x 14-lane and a
    4 x 2 x 28-lane tile of a grouped convolution within 4% (0.554, 0.535), and a first
    batch of twelve picks in rank order held ten of one tile and one of the other, the one
    that ran 13% faster; a search that measured that one program in a slow outer tiling never
    came back to it (34.7 us, against 29.6-30.3 for the seeds that did). Five seeds,
    without and with these picks: ResNet's stride-2 conv 465-563 us and 468-512 us; the
    depthwise conv 22.2-26.1 us and 22.2-27.7 us (noise)."""
    pool = [c for c in ranked[: max_scan or len(ranked)] if c.key not in seen]
    picks: list = []
    taken_tiles: set = set()
    scores = [score(c) for c in pool] if score is not None and pool else []
    finite = [x for x in scores if x is not None and math.isfinite(x)]
    floor = tile_margin * max(finite) if finite else -math.inf
    for k, c in enumerate(pool):
        if len(picks) >= min(n, tiles):
            break
        close = not scores or (scores[k] is not None and scores[k] >= floor)
        shape = structure(c) if close else None
        if close and shape not in taken_tiles:
            taken_tiles.add(shape)
            picks.append(c)
    for c in pool:
        if len(picks) >= n:
            break
        if c not in picks and all(decision_distance(c, p) >= min_diff for p in picks):
            picks.append(c)
    for c in pool:  # not enough far apart: the next best, in rank order
        if len(picks) >= n:
            break
        if c not in picks:
            picks.append(c)
    seen.update(c.key for c in picks)
    return picks


def hedge_picks(pool: Iterable[Any], prior: Callable[[Any], float], n: int, seen: set) -> list:
    """The ``n`` best of ``pool`` by the analytic prior (``prior(cand)``, higher = faster),
    skipping what is in ``seen`` (updated)."""
    if n <= 0:
        return []
    fresh: dict = {}
    for c in pool:
        if c.key not in seen and c.key not in fresh:
            fresh[c.key] = c
    scored = [(prior(c), c) for c in fresh.values()]
    scored = [(s, c) for s, c in scored if s is not None and math.isfinite(s)]
    scored.sort(key=lambda x: -x[0])
    picks = [c for _, c in scored[:n]]
    seen.update(c.key for c in picks)
    return picks


def finalists(measured: Iterable[tuple[float, Any]], k: int, margin: float) -> list:
    """Up to ``k`` distinct measured programs whose best cost is within ``margin`` (0.15:
    15% slower) of the fastest, fastest first."""
    best: dict = {}
    for cost, cand in measured:
        if math.isfinite(cost) and (cand.key not in best or cost < best[cand.key][0]):
            best[cand.key] = (cost, cand)
    ranked = sorted(best.values(), key=lambda x: x[0])
    if not ranked or k <= 0:
        return []
    limit = ranked[0][0] * (1.0 + margin)
    return [c for cost, c in ranked if cost <= limit][:k]
