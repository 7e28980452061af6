"""Builder-worker initializer for MetaSchedule (runs inside the TVM venv only).

``import tvm.s_tir.tensor_intrin`` takes ~25 s on a small machine and every builder worker
does it on its first build; importing it when the worker starts keeps it out of the build
timeout. It must be a module-level function of an importable module (workers are spawned).
"""


def init_worker() -> None:
    """Import what MetaSchedule's builds need, once per worker process."""
    import tvm.s_tir.tensor_intrin  # noqa: F401
