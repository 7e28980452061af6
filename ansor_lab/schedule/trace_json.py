"""Reading a trace's JSON form: every structural fault is a ScheduleError naming where.

A trace on disk comes from a file someone else may have written, truncated or edited, so
``Trace.from_json`` checks its whole shape before anything is replayed: the text parses,
the version is ours, ``insts`` is a list of ``[kind, args, outputs, decision]``, each kind
is declared, each argument is one the kind takes (and none it needs is missing), handles
are ``{"rv": "l3"}`` naming a handle made earlier, and values are plain JSON data of a
bounded size. The limits keep a hostile file from exhausting the replaying process.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ScheduleError
from .instruction_kind import REGISTRY

#: the most instructions a trace may have (the search writes a few hundred at most)
MAX_INSTS = 100_000
#: the most characters of trace text parsed (a million instructions cannot fit, so a trace
#: that long is refused before parsing; a hundred thousand typical ones do)
MAX_TEXT = 16 * 1024 * 1024
#: the deepest nesting of lists inside one argument value
MAX_VALUE_DEPTH = 4
#: the most elements of one list-valued argument (factors, loops, candidates)
MAX_VALUE_ITEMS = 4096

_HANDLE = re.compile(r"[blv][0-9]{1,9}")
_SCALARS = frozenset({bool, int, float, str})


def _fail(where: str, what: str) -> ScheduleError:
    return ScheduleError(
        f"malformed trace {where}: {what} (a trace is the JSON that Trace.as_json() writes; "
        "was the file edited, truncated or written by another program?)"
    )


def parse_text(text: str | bytes) -> Any:
    """JSON data of a trace's text; ScheduleError for text that is not JSON."""
    if len(text) > MAX_TEXT:
        raise _fail("text", f"{len(text)} characters, more than the {MAX_TEXT} read")
    try:
        return json.loads(text)
    except RecursionError:
        raise _fail("text", "JSON nested too deeply") from None
    except (ValueError, TypeError) as err:  # JSONDecodeError and bad bytes are ValueErrors
        raise _fail("text", f"not JSON ({err})") from None


def check_trace(data: Any, version: int) -> list:
    """The instruction list of trace JSON data, after checking its whole structure."""
    if not isinstance(data, dict):
        raise _fail("top level", f"a JSON object is expected, got {type(data).__name__}")
    if data.get("version") != version or type(data.get("version")) is not int:
        raise _fail(
            "field 'version'",
            f"format version {data.get('version')!r}; this ansor_lab reads version {version}",
        )
    if "insts" not in data:
        raise _fail("top level", "field 'insts' (the instruction list) is missing")
    insts = data["insts"]
    if not isinstance(insts, list):
        raise _fail("field 'insts'", f"a list is expected, got {type(insts).__name__}")
    if len(insts) > MAX_INSTS:
        raise _fail("field 'insts'", f"{len(insts)} instructions, more than {MAX_INSTS}")
    defined: set[str] = set()
    for index, item in enumerate(insts):
        _check_inst(index, item, defined)
    return insts


def _check_inst(index: int, item: Any, defined: set[str]) -> None:
    where = f"instruction {index}"
    if not isinstance(item, list) or len(item) != 4:
        raise _fail(where, f"[kind, args, outputs, decision] is expected, got {_short(item)}")
    kind, args, outs, decision = item
    if not isinstance(kind, str) or kind not in REGISTRY:
        raise _fail(
            where,
            f"unknown instruction kind {_short(kind)}; known kinds: {', '.join(REGISTRY)}",
        )
    decl = REGISTRY[kind]
    where = f"instruction {index} ({kind})"
    if not isinstance(args, list):
        raise _fail(where, f"the arguments are a list of [name, value], got {_short(args)}")
    seen: set[str] = set()
    for arg in args:
        if not isinstance(arg, list) or len(arg) != 2 or not isinstance(arg[0], str):
            raise _fail(where, f"an argument is [name, value], got {_short(arg)}")
        name, value = arg
        if name not in decl.param_names:
            try:
                decl.check_args([name])
            except ScheduleError as err:
                raise _fail(where, str(err)) from None
        if name in seen:
            raise _fail(where, f"argument {name!r} is given twice")
        seen.add(name)
        if not (value is None or type(value) in _SCALARS):
            _check_value(f"{where}, argument {name!r}", value, defined, 0)
        if name == decl.varargs and not isinstance(value, list):
            raise _fail(f"{where}, argument {name!r}", f"a list is expected, got {_short(value)}")
    for p in decl.required:
        if p not in seen:
            raise _fail(where, f"argument {p!r} is missing")
    if decision is not None:
        _check_value(f"{where}, decision", decision, defined, 0)
    if not isinstance(outs, list):
        raise _fail(where, f"the outputs are a list of handle names, got {_short(outs)}")
    for name in outs:
        if not isinstance(name, str) or not _HANDLE.fullmatch(name):
            raise _fail(where, f"output {_short(name)} is not a handle name like b0, l3, v5")
        if name in defined:
            raise _fail(where, f"output {name} is defined twice")
        defined.add(name)


def _check_value(where: str, value: Any, defined: set[str], depth: int) -> None:
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    if isinstance(value, dict):
        handle = value.get("rv")
        if len(value) != 1 or not isinstance(handle, str):
            raise _fail(where, f"a handle is {{'rv': name}}, got {_short(value)}")
        if handle not in defined:
            raise _fail(where, f"the trace uses {handle} before it is defined")
        return
    if isinstance(value, list):
        if depth >= MAX_VALUE_DEPTH:
            raise _fail(where, f"lists nested more than {MAX_VALUE_DEPTH} deep")
        if len(value) > MAX_VALUE_ITEMS:
            raise _fail(where, f"{len(value)} items, more than {MAX_VALUE_ITEMS}")
        for v in value:
            _check_value(where, v, defined, depth + 1)
        return
    raise _fail(where, f"unexpected value {_short(value)}")


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."
