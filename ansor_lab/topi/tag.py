"""Tags topi puts on compute ops (TVM's names); schedules and sketch rules dispatch on them."""

ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"
OPAQUE = "opaque"


def is_broadcast(tag: str) -> bool:
    """True for elementwise and broadcast tags (TVM's ``tag.is_broadcast``)."""
    return tag.startswith((ELEMWISE, BROADCAST))


def is_injective(tag: str) -> bool:
    """True for tags of injective ops: broadcast, elemwise or injective (TVM's ``is_injective``)."""
    return is_broadcast(tag) or tag.startswith(INJECTIVE)
