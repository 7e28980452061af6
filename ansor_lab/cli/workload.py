"""Finding the workload a command names: ``FILE.py:FUNC``, ``MODULE:FUNC`` or a registered name.

Loading ``FILE.py`` runs the user's own file, as ``python FILE.py`` would; nothing read
from a log or a trace is ever executed (those are replayed as data).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import AnsorLabError, CommandLineError


def parse_args_json(text: str | None) -> list:
    """The ``--args`` value: a JSON list of the workload function's arguments."""
    if text is None:
        return []
    try:
        value = json.loads(text)
    except ValueError as err:
        raise CommandLineError(
            f"--args {text!r} is not JSON ({err}); write a JSON list, e.g. --args '[256, 128]'"
        ) from None
    if not isinstance(value, list):
        raise CommandLineError(
            f"--args {text!r} is a JSON {type(value).__name__}, not a list; write the "
            "function's arguments as a list, e.g. --args '[256, 128]' or --args '[64]'"
        )
    return value


def _load_file(path: str, func: str) -> Callable:
    if not os.path.isfile(path):
        raise CommandLineError(f"workload file {path!r} does not exist; give FILE.py:FUNC")
    name = "ansor_lab_workload_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CommandLineError(f"cannot load {path!r} as Python; give a .py file as FILE.py:FUNC")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return _attribute(module, func, path)


def _attribute(module: Any, func: str, where: str) -> Callable:
    fn = getattr(module, func, None)
    if fn is None:
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise CommandLineError(
            f"{where} defines no function {func!r}; it defines: {', '.join(names) or 'none'}"
        )
    if not callable(fn):
        raise CommandLineError(f"{where}:{func} is a {type(fn).__name__}, not a function")
    return fn


def resolve_workload(spec: str, imports: list[str] | None = None) -> tuple[str, Callable]:
    """(registered name, function) of ``FILE.py:FUNC``, ``MODULE:FUNC`` or a registered name.

    The function is registered (``auto_scheduler.register_workload``) under its name.
    """
    from ..search.task import WORKLOAD_FUNC_REGISTRY, register_workload

    for module in imports or []:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise CommandLineError(f"--import {module}: {err}") from None
    if ":" in spec:
        where, func = spec.rsplit(":", 1)
        if not func.isidentifier():
            raise CommandLineError(
                f"{spec!r}: {func!r} is not a function name; write FILE.py:FUNC or MODULE:FUNC"
            )
        if where.endswith(".py") or os.sep in where:
            fn = _load_file(where, func)
        else:
            try:
                module = importlib.import_module(where)
            except ImportError as err:
                raise CommandLineError(
                    f"cannot import {where!r} ({err}); give FILE.py:FUNC for a file, or a "
                    "module on PYTHONPATH as MODULE:FUNC"
                ) from None
            fn = _attribute(module, func, where)
        register_workload(func, fn, override=True)
        return func, fn
    if spec in WORKLOAD_FUNC_REGISTRY:
        return spec, WORKLOAD_FUNC_REGISTRY[spec]
    if spec.endswith(".py"):
        raise CommandLineError(
            f"{spec!r} names a file but no function; write {spec}:FUNC, FUNC being the "
            "function that returns the workload's tensors"
        )
    known = sorted(WORKLOAD_FUNC_REGISTRY)
    raise CommandLineError(
        f"{spec!r} is not a registered workload"
        + (f" (registered: {', '.join(known)})" if known else "")
        + "; give FILE.py:FUNC or MODULE:FUNC, or --import MODULE that registers it"
    )


def make_task(spec: str, args: list, target: str, imports: list[str] | None = None) -> Any:
    """The SearchTask of the workload ``spec`` with ``args`` on ``target``."""
    from ..search.task import SearchTask

    name, fn = resolve_workload(spec, imports)
    try:
        return SearchTask(func=name, args=tuple(args), target=target)
    except AnsorLabError:
        raise
    except TypeError as err:  # the user's function called with the wrong arguments
        raise CommandLineError(
            f"calling {name}(*{args!r}) failed: {err}; pass its arguments with --args"
        ) from None
