"""``tvm.transform.PassContext`` (also ``tvm.ir.transform``): the build options of TVM's
pass context that mean something here.

    with tvm.transform.PassContext(opt_level=3, config={"tir.disable_vectorize": True}):
        f = tvm.build(s, [A, B, C])

``opt_level`` is accepted (0-4) and changes nothing: ansor_lab lowers and optimizes a
program the same way at every level (TVM's levels choose graph-level passes, which are
out of scope here). Of ``config``, these keys are honoured by ``tvm.build``:

* ``"tir.disable_vectorize"``: vectorized loops are built as plain loops (LLVM may still
  vectorize them itself, as in TVM);
* ``"tir.instrument_bound_checkers"``: every buffer access is checked at run time, as
  ``tvm.build(..., instrument_bound_checkers=True)``;
* ``"tir.add_lower_pass"``: ``[(phase, pass), ...]``, passes of the user's own
  (``tvm.tir.transform.prim_func_pass``) run by ``tvm.lower`` and ``tvm.build`` after
  ansor_lab's lowering, in phase order (see ``tir_transform``).

Any other key, a required or disabled pass, or a pass instrument is refused with our
error (silently ignoring an option would build something other than what was asked).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import OutOfScopeError

#: config keys honoured here -> what they do
CONFIGS = {
    "tir.disable_vectorize": "vectorized loops are built as plain loops",
    "tir.instrument_bound_checkers": "every buffer access is checked at run time",
    "tir.add_lower_pass": "[(phase, pass)]: passes of your own, run after the lowering",
}


class PassContext:
    """The options in force for ``tvm.build`` (see the module docstring)."""

    _stack: ClassVar[list[PassContext]] = []

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Any = None,
        disabled_pass: Any = None,
        instruments: Any = None,
        config: dict | None = None,
        trace: Any = None,
        trace_stack: Any = None,
        make_traceable: Any = None,
        num_evals: int = 0,
        tuning_api_database: Any = None,
    ) -> None:
        if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 4:
            raise ValueError(
                f"PassContext(opt_level=...) takes an int from 0 to 4, got {opt_level!r}"
            )
        for what, value in (
            ("required_pass", required_pass),
            ("disabled_pass", disabled_pass),
            ("instruments", instruments),
        ):
            if value:
                raise OutOfScopeError(
                    f"PassContext({what}={value!r}): ansor_lab's lowering is one fixed "
                    "pipeline without named passes to require, disable or instrument; leave "
                    f"{what} out (tvm.lower(...) shows the program as it is built)"
                )
        config = dict(config or {})
        unknown = sorted(k for k in config if k not in CONFIGS)
        if unknown:
            known = "; ".join(f"{k!r} ({v})" for k, v in CONFIGS.items())
            raise OutOfScopeError(
                f"PassContext config {unknown} is not supported here; the keys honoured are {known}"
            )
        for key, value in config.items():
            if key == "tir.add_lower_pass":
                _check_lower_passes(value)
            elif not isinstance(value, (bool, int)):
                raise ValueError(f"PassContext config {key!r} takes a bool, got {value!r}")
        self.opt_level = opt_level
        self.config = config
        self.required_pass: list = []
        self.disabled_pass: list = []
        self.instruments: list = []

    def __enter__(self) -> PassContext:
        PassContext._stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        PassContext._stack.remove(self)

    @staticmethod
    def current() -> PassContext:
        """The innermost context entered (a default one outside any ``with``)."""
        return PassContext._stack[-1] if PassContext._stack else PassContext()

    @staticmethod
    def list_configs() -> dict:
        """The config keys honoured here, each with what it does."""
        return dict(CONFIGS)

    def lower_passes(self) -> list:
        """The ``(phase, pass)`` entries of ``tir.add_lower_pass`` (empty when unset)."""
        return list(self.config.get("tir.add_lower_pass", []))

    def flag(self, key: str) -> bool:
        """The boolean value of config ``key`` (False when it is not set)."""
        return bool(self.config.get(key, False))

    def __repr__(self) -> str:
        return f"PassContext(opt_level={self.opt_level}, config={self.config})"


def _check_lower_passes(value: Any) -> None:
    entries = value if isinstance(value, (list, tuple)) else None
    bad = entries is None or not all(
        isinstance(e, (list, tuple))
        and len(e) == 2
        and isinstance(e[0], int)
        and not isinstance(e[0], bool)
        and callable(e[1])
        for e in entries
    )
    if bad:
        raise ValueError(
            "PassContext config 'tir.add_lower_pass' takes a list of (phase, pass) pairs, "
            f"e.g. [(1, my_pass)] with my_pass = tvm.tir.transform.prim_func_pass(f); got {value!r}"
        )
