"""Symbolic programs printed with their shape variables (``n = T.int32()``).

A symbolic program is lowered per shape (``SymbolicProgram.lower``), never symbolically,
so its text is recovered from concrete lowerings: the program is printed at three
bindings of large distinct primes (no split divides them, so every guard a symbolic
``n`` needs is there, as TVM prints it), the three texts must agree everywhere but in
their integer literals, and each literal that changes with the binding is written as
the expression of the shape variables that gives it at all three (``n``, ``n - 1``,
``T.ceildiv(n, 32)``, ``n * m``, ``n // 4 * 2``...). Parameters with symbolic shapes
become ``var_A: T.handle`` with ``A = T.match_buffer(var_A, (n,))``.

When the texts differ in anything else, or a literal fits no expression, or a constant
of the program is too large to tell apart from a shape, the caller prints the probe
specialization with its note instead (``None`` here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import combinations_with_replacement

#: per binding, the values of the 1st, 2nd, ... shape variable (primes, all distinct); the
#: variables lie ~300 apart, so that ``T.ceildiv(n, f)`` of one never equals another's at
#: all three bindings for a factor f <= 256 (a launch extent names the right variable)
PRIMES = (
    (1009, 1319, 1609, 1913, 2213, 2521),
    (2003, 2309, 2609, 2903, 3203, 3511),
    (3001, 3301, 3607, 3907, 4201, 4507),
)
#: an integer literal: not part of a name, a float or a dotted path
_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")
_UNARY_BEFORE = set("([,*+-/<>=%:") | {""}


def bindings(shape_vars: Sequence) -> list[dict] | None:
    """The three bindings the program is printed at (None: too many variables)."""
    if len(shape_vars) > len(PRIMES[0]):
        return None
    return [dict(zip(shape_vars, row)) for row in PRIMES]


def _tokens(text: str) -> list[tuple[int, int, int]]:
    """(start, end, value) of each integer literal, a unary minus included."""
    out = []
    for m in _INT.finditer(text):
        start, value = m.start(), int(m.group())
        k = start - 1
        if k >= 0 and text[k] == "-":
            j = k - 1
            while j >= 0 and text[j] == " ":
                j -= 1
            if (text[j] if j >= 0 else "") in _UNARY_BEFORE:
                start, value = k, -value
        out.append((start, m.end(), value))
    return out


class _Fitter:
    """Expressions of the shape variables that give a literal's value at every binding."""

    def __init__(self, names: list[str], points: list[list[int]], factors: set[int]) -> None:
        self.points = points  # per binding, the variables' values
        atoms: list[tuple[str, tuple, bool]] = []  # (text, values, needs parentheses)
        for k, name in enumerate(names):
            atoms.append((name, tuple(p[k] for p in points), False))
        for k, name in enumerate(names):
            for f in sorted(factors):
                vals = tuple(p[k] for p in points)
                atoms.append((f"T.ceildiv({name}, {f})", tuple(-(-v // f) for v in vals), False))
                atoms.append((f"{name} // {f}", tuple(v // f for v in vals), True))
        products = []
        for a, b in combinations_with_replacement(atoms, 2):
            ta = f"({a[0]})" if a[2] else a[0]
            tb = f"({b[0]})" if b[2] else b[0]
            products.append((f"{ta} * {tb}", tuple(x * y for x, y in zip(a[1], b[1])), True))
        self.atoms = atoms + products

    def fit(self, values: tuple) -> str | None:
        """``a * atom + d`` giving ``values`` at every binding, simplest first."""
        for text, xs, paren in self.atoms:
            if xs == values:
                return f"({text})" if paren else text
        for text, xs, _ in self.atoms:
            if xs[1] == xs[0]:
                continue
            a, rem = divmod(values[1] - values[0], xs[1] - xs[0])
            if rem or a == 0:
                continue
            d = values[0] - a * xs[0]
            if all(a * x + d == v for x, v in zip(xs, values)):
                head = text if a == 1 else f"{a} * {text}" if a != -1 else f"-{text}"
                if d == 0:
                    return f"({head})"
                return f"({head} {'+' if d > 0 else '-'} {abs(d)})"
        return None


def symbolize(texts: list[str], names: list[str], points: list[list[int]]) -> str | None:
    """The first text with each binding-dependent literal written symbolically."""
    toks = [_tokens(t) for t in texts]
    if len({len(t) for t in toks}) != 1:
        return None
    skeletons = []
    for text, ts in zip(texts, toks):
        parts, last = [], 0
        for s, e, _ in ts:
            parts.append(text[last:s])
            last = e
        parts.append(text[last:])
        skeletons.append(parts)
    if any(sk != skeletons[0] for sk in skeletons[1:]):
        return None  # the programs differ in more than numbers
    constant = {ts[0][2] for ts in zip(*toks) if len({t[2] for t in ts}) == 1}
    smallest = min(min(p) for p in points)
    if any(abs(c) * 2 >= smallest for c in constant):
        return None  # a constant as large as a shape: it could be one
    fitter = _Fitter(names, points, {c for c in constant if 2 <= c <= 4096})
    out = [skeletons[0][0]]
    for k, ts in enumerate(zip(*toks)):
        values = tuple(t[2] for t in ts)
        if len(set(values)) == 1:
            out.append(texts[0][ts[0][0] : ts[0][1]])
        else:
            expr = fitter.fit(values)
            if expr is None:
                return None
            if expr.startswith("(") and _bare_ok(skeletons[0], k):
                expr = expr[1:-1]
            out.append(expr)
        out.append(skeletons[0][k + 1])
    return "".join(out)


def _bare_ok(skeleton: list[str], k: int) -> bool:
    """Whether the literal ``k`` stands alone (no operator binds to it), so an expression
    replacing it needs no parentheses."""
    before = skeleton[k].rstrip()[-1:]
    after = skeleton[k + 1].lstrip()
    # neighbours binding less tightly than any arithmetic: brackets, commas, comparisons
    loose_after = after[:1] in ("", ")", ",", "]", ":", "<", ">", "=", "!") or after.startswith(
        ("and ", "or ")
    )
    return before in ("", "(", ",", "[", "<", ">", "=") and loose_after


_PARAM = re.compile(r'(\w+): T\.Buffer\(\((.*?)\), "(\w+)"\)')


def display_names(text: str, shape_vars: Sequence) -> list[str]:
    """The shape variables' names, renamed (``k_s``) where the program already uses the
    name for something else (a reduction loop ``k`` over a shape ``k``)."""
    taken = set(re.findall(r"[A-Za-z_]\w*", text))
    out = []
    for v in shape_vars:
        name = v.name
        while name in taken or name in out:
            name += "_s"
        out.append(name)
    return out


def with_handles(text: str, shape_vars: Sequence, names: list[str]) -> str:
    """Parameters with symbolic shapes as ``var_A: T.handle`` + ``T.match_buffer``, the
    shape variables declared first (``n = T.int32()``), one-axis grids as ``range``."""
    lines = text.split("\n")
    at = next(k for k, ln in enumerate(lines) if ln.startswith("def "))
    head = lines[at]
    decls = [f"    {name} = T.{v.dtype}()" for v, name in zip(shape_vars, names)]
    matched = []

    def param(m: re.Match) -> str:
        name, shape, dtype = m.groups()
        if not any(re.search(rf"\b{re.escape(n)}\b", shape) for n in names):
            return m.group(0)
        dt = "" if dtype == "float32" else f', "{dtype}"'
        matched.append(f"    {name} = T.match_buffer(var_{name}, ({shape}){dt})")
        return f"var_{name}: T.handle"

    lines[at] = _PARAM.sub(param, head)
    body = [re.sub(r"in T\.grid\(([^,()]+|T\.ceildiv\([^()]*\))\):$", r"in range(\1):", ln)
            for ln in lines[at + 1 :]]  # fmt: skip
    return "\n".join(lines[: at + 1] + decls + matched + body)


def symbolic_text(print_at: Callable[[dict], str], shape_vars: Sequence) -> str | None:
    """The program's text with its shape variables, from ``print_at(binding)``, or None
    where it cannot be recovered (see the module docstring)."""
    bs = bindings(shape_vars)
    if bs is None or not shape_vars:
        return None
    try:
        texts = [print_at(b) for b in bs]
    except Exception:  # noqa: BLE001 - a binding the schedule refuses: print the probe
        return None
    points = [[b[v] for v in shape_vars] for b in bs]
    names = display_names(texts[0], shape_vars)
    text = symbolize(texts, names, points)
    return None if text is None else with_handles(text, shape_vars, names)
