"""The IPython extension: ``%load_ext ansor_lab``.

It registers the rich displays of ``display.py`` with IPython's mime-bundle formatter
(``for_type``: the core classes stay free of notebook code and keep their ``repr`` as
text/plain) and adds the line magic ``%ansor_target`` that sets the session's default
target (``llvm``, ``cuda``, any target string; ``none`` clears it; no argument shows it).
"""

from __future__ import annotations

from typing import Any

#: (class, the printer it had before) per registration, to undo on unload
_SAVED: list[tuple[type, Any]] = []
MAGIC = "ansor_target"


def ansor_target(line: str) -> None:
    """``%ansor_target llvm|cuda|"llvm -num-cores=2"|none``: set the default target."""
    from ..codegen.target import Target, TargetError, default_target, set_default_target

    spec = line.strip().strip("\"'").strip()
    if spec:
        if spec.lower() in ("none", "reset", "default"):
            set_default_target(None)
        else:
            try:
                set_default_target(Target(spec))
            except TargetError as err:
                from IPython.core.error import UsageError

                raise UsageError(f"%{MAGIC}: {err}") from None
    print(f"default target: {default_target()}")


def load_ipython_extension(ipython: Any) -> None:
    """Register the rich displays and the ``%ansor_target`` magic in ``ipython``."""
    from .display import _printers

    formatter = ipython.display_formatter.mimebundle_formatter
    if not _SAVED:
        for cls, fn in _printers().items():
            _SAVED.append((cls, formatter.for_type(cls, fn)))
    ipython.register_magic_function(ansor_target, "line", MAGIC)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the displays and the magic (the default target is left as it is)."""
    formatter = ipython.display_formatter.mimebundle_formatter
    for cls, old in _SAVED:
        formatter.pop(cls, None)
        if old is not None:
            formatter.for_type(cls, old)
    _SAVED.clear()
    ipython.magics_manager.magics["line"].pop(MAGIC, None)
