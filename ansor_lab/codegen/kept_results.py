"""Work whose results are not arguments is still done (and the user is told they are lost).

TVM builds ``create_schedule([C.op, D.op, F.op])`` with arguments ``[A, B, E]``: F is then
a temporary written and never read, and LLVM would delete its whole computation (a
program timed at a microsecond). TVM keeps such buffers; so do we: the buffers written
and never read are named in the function's ``kept_results`` attribute, and the code
generator makes their memory escape after they are written (an empty inline-asm barrier,
as benchmark libraries' DoNotOptimize does), which keeps every store that produced them.
"""

from __future__ import annotations

import warnings

from ..dsl import expr as E
from ..errors import DiscardedResultWarning
from ..ir import nodes as N
from ..ir.visitor import stmt_exprs, walk_stmts

#: the PrimFunc attribute naming the buffers the code generator keeps alive
KEPT_RESULTS = "kept_results"


def unread_temporaries(func: N.PrimFunc) -> list[N.Buffer]:
    """Global buffers the function allocates and writes but never reads (a buffer's own
    update, ``F[i] = F[i] + x``, does not count as reading it)."""
    allocated: list = []
    written: set = set()
    read: set = set()
    for node in walk_stmts(func.body):
        if isinstance(node, N.Allocate) and node.buffer.scope == "global":
            allocated.append(node.buffer)
        own = node.buffer if isinstance(node, N.BufferStore) else None
        if own is not None:
            written.add(own)
        for e in stmt_exprs(node):
            for sub in E.post_order(e):
                if isinstance(sub, N.BufferLoad) and sub.buffer is not own:
                    read.add(sub.buffer)
    return [b for b in allocated if b in written and b not in read]


def keep_unread_results(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` with its unread results marked to be kept, and a warning naming them."""
    lost = unread_temporaries(func)
    if not lost:
        return func
    names = tuple(sorted(b.name for b in lost))
    warnings.warn(
        f"{func.name}: {', '.join(names)} {'is' if len(names) == 1 else 'are'} computed but "
        "not among the function's arguments, so the results are discarded (the work is still "
        "done, as TVM does). Pass them in the argument list to get them, e.g. "
        f"tvm.build(s, [..., {names[0]}])",
        DiscardedResultWarning,
        stacklevel=4,
    )
    return func.with_attr(KEPT_RESULTS, names)
