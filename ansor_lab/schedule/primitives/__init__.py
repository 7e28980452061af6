"""Schedule primitives as functions that change a State.

Each function validates its inputs, changes the State it is given and returns the names
of what it created. Callers hand it a copy and keep the copy only on success, so a
ScheduleError leaves the original untouched (see ``tir_schedule``). Every error names
the primitive, the block and loop, and the reason.

The functions live by what they change: ``loops`` (split, fuse, reorder, annotations),
``location`` (where a block is computed), ``storage`` (caches, rfactor, buffers);
``common`` has the handle checks they share and ``checks`` the validation after a step.
"""

from __future__ import annotations

from .checks import refresh_extents
from .common import compute_stage, leaf
from .location import (
    compute_at,
    compute_inline,
    compute_root,
    reverse_compute_at,
    reverse_compute_inline,
)
from .loops import MAX_LOOPS, annotate_loop, fuse, pragma, reorder, split
from .merge import merge, merged_leaves
from .storage import (
    buffer_block,
    cache_read,
    cache_write,
    decompose_reduction,
    rfactor,
    set_scope,
    storage_align,
    transform_layout,
)

__all__ = [
    "MAX_LOOPS",
    "annotate_loop",
    "buffer_block",
    "cache_read",
    "cache_write",
    "compute_at",
    "compute_inline",
    "compute_root",
    "compute_stage",
    "decompose_reduction",
    "fuse",
    "leaf",
    "merge",
    "merged_leaves",
    "pragma",
    "refresh_extents",
    "reorder",
    "reverse_compute_at",
    "reverse_compute_inline",
    "rfactor",
    "set_scope",
    "split",
    "storage_align",
    "transform_layout",
]
