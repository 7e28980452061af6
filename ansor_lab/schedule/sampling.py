"""Random draws of the sampling instructions (tile sizes, categorical choices)."""

from __future__ import annotations

import math
import random
from functools import lru_cache

from ..errors import ScheduleError


def prime_factors(n: int) -> list[tuple[int, int]]:
    """``n`` as [(prime, exponent), ...]."""
    out = []
    p = 2
    while p * p <= n:
        if n % p == 0:
            e = 0
            while n % p == 0:
                n //= p
                e += 1
            out.append((p, e))
        p += 1
    if n > 1:
        out.append((n, 1))
    return out


@lru_cache(maxsize=4096)
def perfect_tiles(extent: int, n: int, max_innermost: int) -> tuple[tuple[int, ...], ...]:
    """Every ordered way of writing ``extent`` as a product of ``n`` factors.

    Only those whose innermost factor is at most ``max_innermost`` (<= 0: no limit).
    """

    def rec(rest: int, k: int) -> list[tuple[int, ...]]:
        if k == 1:
            return [(rest,)]
        out = []
        for d in range(1, rest + 1):
            if rest % d == 0:
                out.extend((d,) + tail for tail in rec(rest // d, k - 1))
        return out

    tiles = rec(extent, n)
    if max_innermost > 0:
        tiles = [t for t in tiles if t[-1] <= max_innermost]
    return tuple(tiles)


def sample_perfect_tile(rng: random.Random, extent: int, n: int, max_innermost: int) -> list[int]:
    """Draw a factorization of ``extent`` into ``n`` factors.

    Like TVM: each prime power is spread over the factors uniformly at random, and a draw
    whose innermost factor exceeds ``max_innermost`` is redrawn.
    """
    if n == 1 and 0 < max_innermost < extent:
        # the one factor is the extent itself: no tiling respects the bound
        raise ScheduleError(
            f"sample_perfect_tile: n=1 tiles the extent {extent} as [{extent}], above "
            f"max_innermost_factor={max_innermost}; use n >= 2 or a larger bound"
        )
    factors = prime_factors(extent)
    for _ in range(100):
        out = [1] * n
        for p, e in factors:
            for _ in range(e):
                out[rng.randrange(n)] *= p
        if max_innermost <= 0 or out[-1] <= max_innermost:
            return out
    if count_tiles(extent, n) <= _LIST_AT_MOST:
        return list(rng.choice(perfect_tiles(extent, n, max_innermost)))
    # too many tilings to list: draw the innermost factor among the divisors allowed, then
    # spread what is left over the other factors as above
    inner = rng.choice([d for d in divisors(extent) if d <= max_innermost])
    out = [1] * (n - 1) + [inner]
    for p, e in prime_factors(extent // inner):
        for _ in range(e):
            out[rng.randrange(n - 1)] *= p
    return out


#: the fallback draw lists every tiling only up to this many
_LIST_AT_MOST = 20_000


def count_tiles(extent: int, n: int) -> int:
    """How many ordered ways there are to write ``extent`` as a product of ``n`` factors."""
    count = 1
    for _, e in prime_factors(extent):
        count *= math.comb(e + n - 1, n - 1)
    return count


def divisors(n: int) -> list[int]:
    """Every divisor of ``n``, ascending."""
    out = [1]
    for p, e in prime_factors(n):
        out = [d * p**k for d in out for k in range(e + 1)]
    return sorted(out)


def sample_categorical(rng: random.Random, probs: list[float]) -> int:
    """Index drawn with the given probabilities."""
    total = sum(probs)
    x = rng.random() * total
    acc = 0.0
    for k, p in enumerate(probs):
        acc += p
        if x < acc:
            return k
    return len(probs) - 1
