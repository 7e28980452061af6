"""Random structural mutations of trace JSON, for the malformed-trace fuzz test.

Each mutation is what a damaged or hand-edited file shows: a field dropped, a value of
another type, an argument renamed or repeated, instructions swapped or lost, the text cut
short, the top level replaced.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

#: values of every JSON type (and a few hostile ones) put where another was expected
ODD_VALUES = [
    "x",
    "l1",
    "b0",
    7,
    -1,
    0,
    3.5,
    None,
    True,
    [],
    {},
    [1, 2],
    [[[]]],
    {"rv": "l999"},
    {"rv": 5},
    {"rv": ["l1"]},
    {"rv": "l1", "x": 1},
    {"x": 1},
    2**40,
    -(2**63),
    1e300,
    "",
    "Split",
    [None],
    [{"rv": "b0"}],
    float("nan"),
]


def _paths(x, path=()):
    yield path
    if isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, path + (i,))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))


def _get(x, path):
    for p in path:
        x = x[p]
    return x


def mutate(data: dict, rng: random.Random) -> tuple[str, Any]:
    """(what was done, the mutated data or JSON text); ``data`` is left unchanged."""
    d = copy.deepcopy(data)
    op = rng.choice(
        ["drop", "retype", "rename", "truncate", "toplevel", "reorder", "dup_arg", "kind", "outs"]
    )
    insts = d["insts"]
    if op == "truncate":
        text = json.dumps(d)
        k = rng.randrange(len(text))
        return f"truncate at {k}", text[:k]
    if op == "toplevel":
        choice = rng.choice(["version", "noinsts", "insts_type", "list", "scalar", "extra"])
        if choice == "version":
            d["version"] = rng.choice([0, 2, "1", None, 1.0])
        elif choice == "noinsts":
            del d["insts"]
        elif choice == "insts_type":
            d["insts"] = rng.choice(ODD_VALUES)
        elif choice == "list":
            return "a list", [d]
        elif choice == "scalar":
            return "a scalar", rng.choice(ODD_VALUES)
        else:
            d["extra"] = 1
        return f"toplevel {choice}", d
    if not insts:
        return "empty", d
    k = rng.randrange(len(insts))
    inst = insts[k]
    if op == "drop":
        if rng.random() < 0.5 and inst[1]:
            j = rng.randrange(len(inst[1]))
            del inst[1][j]
            return f"drop arg {j} of inst {k}", d
        del inst[rng.randrange(len(inst))]
        return f"drop field of inst {k}", d
    if op == "reorder":
        j = rng.randrange(len(insts))
        insts[k], insts[j] = insts[j], insts[k]
        if rng.random() < 0.5:
            del insts[j]
        return f"swap/delete inst {k},{j}", d
    if op == "dup_arg" and inst[1]:
        inst[1].append(copy.deepcopy(rng.choice(inst[1])))
        return f"dup arg of inst {k}", d
    if op == "rename" and inst[1]:
        j = rng.randrange(len(inst[1]))
        inst[1][j][0] = rng.choice(["lop", "factor", "", 3, None, "loops", "decision"])
        return f"rename arg {j} of inst {k}", d
    if op == "kind":
        inst[0] = rng.choice(["Splitt", "", 3, None, "GetLoops", "EnterPostproc", ["Split"]])
        return f"kind of inst {k}", d
    if op == "outs":
        inst[2] = rng.choice([["l1"], ["x"], [3], "l1", None, [["l1"]], [], ["l1", "l1"], ["q7"]])
        return f"outs of inst {k}", d
    # retype: replace a random sub-value of the instruction
    paths = list(_paths(inst))
    path = rng.choice(paths[1:]) if len(paths) > 1 else ()
    if not path:
        insts[k] = rng.choice(ODD_VALUES)
    else:
        parent = _get(inst, path[:-1])
        parent[path[-1]] = rng.choice(ODD_VALUES)
    return f"retype inst {k} at {path}", d
