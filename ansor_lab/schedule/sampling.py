"""Random draws of the sampling instructions (tile sizes, categorical choices)."""

from __future__ import annotations

import random
from functools import lru_cache


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
    factors = prime_factors(extent)
    for _ in range(100):
        out = [1] * n
        for p, e in factors:
            for _ in range(e):
                out[rng.randrange(n)] *= p
        if max_innermost <= 0 or out[-1] <= max_innermost:
            return out
    choices = perfect_tiles(extent, n, max_innermost)
    return list(rng.choice(choices))


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
