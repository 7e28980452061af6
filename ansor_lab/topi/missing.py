"""TVM ``topi`` names ansor_lab does not provide: an error that says what to write instead.

``topi.nn.deformable_conv2d_nchw`` after ``import ansor_lab as tvm`` would otherwise stop
with a bare ``AttributeError``. The error (``MissingOperatorError``, an AttributeError, so
``hasattr`` stays False) lists what the module does provide and how to write the rest.
"""

from __future__ import annotations

from ..errors import MissingOperatorError


def missing_operator(module: str, name: str, provided: list[str]) -> AttributeError:
    """The error for ``module.name``; dunder probes (``__wrapped__``...) get a plain one."""
    if name.startswith("__") and name.endswith("__"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    public = ", ".join(sorted(n for n in provided if not n.startswith("_")))
    short = module.removeprefix("ansor_lab.")  # the name TVM code writes: topi.nn
    return MissingOperatorError(
        f"module {module!r} has no attribute {name!r}: {short}.{name} is not provided by "
        "ansor_lab. Write the operator with te.compute "
        "(reductions with te.sum / te.max / te.min over te.reduce_axis, padding with "
        "topi.nn.pad): the auto-scheduler tunes it like any topi operator. "
        f"{short} provides: {public}"
    )
