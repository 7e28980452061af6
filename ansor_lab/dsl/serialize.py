"""A DAG's structure as JSON data, and back.

This is how a workload travels to worker processes and into records: plain data, read
by interpreting node names, never by evaluating code. Variables are numbered in order of
first appearance so that the same structure always gives the same text (the workload key
is a hash of it).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..errors import DSLError
from . import expr as E
from .tensor import ComputeOp, PlaceholderOp, Tensor

FORMAT_VERSION = 1

_BINARY = {
    cls.__name__: cls
    for cls in (
        E.Add,
        E.Sub,
        E.Mul,
        E.Div,
        E.Mod,
        E.FloorDiv,
        E.FloorMod,
        E.Min,
        E.Max,
    )
}
_CMP = {cls.__name__: cls for cls in (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)}
_LOGIC = {"And": E.And, "Or": E.Or}


class _Writer:
    def __init__(self) -> None:
        self.var_ids: dict[int, int] = {}
        self.vars: list[list] = []
        self.tensor_ids: dict[int, int] = {}

    def var(self, v: E.Var) -> int:
        key = id(v)
        if key not in self.var_ids:
            self.var_ids[key] = len(self.vars)
            self.vars.append([v.name, v.dtype])
        return self.var_ids[key]

    def itervar(self, iv: E.IterVar) -> list:
        return [self.var(iv.var), int(iv.dom.min), int(iv.dom.extent), iv.kind]

    def expr(self, e: E.PrimExpr) -> Any:
        t = type(e)
        if t is E.Var:
            return ["Var", self.var(e)]
        if t is E.IntImm:
            return ["Int", e.value, e.dtype]
        if t is E.FloatImm:
            value = e.value
            text = repr(value) if value == value and abs(value) != float("inf") else str(value)
            return ["Float", text, e.dtype]
        if t is E.Cast:
            return ["Cast", e.dtype, self.expr(e.value)]
        if t.__name__ in _BINARY:
            return [t.__name__, e.dtype, self.expr(e.a), self.expr(e.b)]
        if t.__name__ in _CMP or t.__name__ in _LOGIC:
            return [t.__name__, self.expr(e.a), self.expr(e.b)]
        if t is E.Not:
            return ["Not", self.expr(e.a)]
        if t is E.Select:
            return [
                "Select",
                self.expr(e.condition),
                self.expr(e.true_value),
                self.expr(e.false_value),
            ]
        if t is E.Call:
            return ["Call", e.op, e.dtype, [self.expr(a) for a in e.args]]
        if t is E.TensorLoad:
            return ["Load", self.tensor_ids[id(e.tensor)], [self.expr(i) for i in e.indices]]
        if t is E.Reduce and not isinstance(e.combiner, str):
            raise DSLError(
                f"tuple reduction {e.combiner} cannot be written to a record or a DAG JSON: "
                "it is scheduled by hand only (the auto-scheduler does not search it)"
            )
        if t is E.Reduce:
            cond = None if e.condition is None else self.expr(e.condition)
            return [
                "Reduce",
                e.combiner,
                self.expr(e.source),
                [self.var(a.var) for a in e.axis],
                cond,
            ]
        raise DSLError(f"cannot serialize expression node {t.__name__}")


def dag_to_json(tensors: list[Tensor]) -> dict:
    """The structure of the ops producing ``tensors`` (topologically sorted) as JSON data."""
    from .dag import topo_order  # noqa: PLC0415 - dag imports this module (workload keys)

    ops = topo_order(tensors)
    w = _Writer()
    items = []
    for index, op in enumerate(ops):
        w.tensor_ids[id(op.output(0))] = index
        if isinstance(op, PlaceholderOp):
            items.append(
                {"kind": "placeholder", "name": op.name, "shape": list(op.shape), "dtype": op.dtype}
            )
            continue
        entry = {
            "kind": "compute",
            "name": op.name,
            "tag": op.tag,
            "axis": [w.itervar(iv) for iv in op.axis],
            "reduce_axis": [w.itervar(iv) for iv in op.reduce_axis],
        }
        entry["body"] = w.expr(op.body[0])
        if op.attrs:
            entry["attrs"] = {k: v for k, v in op.attrs.items() if _plain(v)}
        items.append(entry)
    outputs = [w.tensor_ids[id(t)] for t in tensors]
    return {"version": FORMAT_VERSION, "vars": w.vars, "ops": items, "outputs": outputs}


def _plain(v: object) -> bool:
    try:
        json.dumps(v)
        return True
    except TypeError:
        return False


class _Reader:
    def __init__(self, data: dict) -> None:
        self.vars = [E.Var(name, dtype) for name, dtype in data["vars"]]
        self.itervars: dict[int, E.IterVar] = {}
        self.tensors: list[Tensor] = []

    def itervar(self, item: list) -> E.IterVar:
        vid, lo, extent, kind = item
        iv = E.IterVar(self.vars[vid], E.Range.of(lo, extent), kind)
        self.itervars[vid] = iv
        return iv

    def expr(self, j: Any) -> E.PrimExpr:
        kind = j[0]
        if kind == "Var":
            return self.vars[j[1]]
        if kind == "Int":
            return E.IntImm(int(j[1]), j[2])
        if kind == "Float":
            return E.FloatImm(float(j[1]), j[2])
        if kind == "Cast":
            return E.Cast(self.expr(j[2]), j[1])
        if kind in _BINARY:
            return _BINARY[kind](self.expr(j[2]), self.expr(j[3]), j[1])
        if kind in _CMP:
            return _CMP[kind](self.expr(j[1]), self.expr(j[2]))
        if kind in _LOGIC:
            return _LOGIC[kind](self.expr(j[1]), self.expr(j[2]))
        if kind == "Not":
            return E.Not(self.expr(j[1]))
        if kind == "Select":
            t = self.expr(j[2])
            return E.Select(self.expr(j[1]), t, self.expr(j[3]), t.dtype)
        if kind == "Call":
            return E.Call(j[1], tuple(self.expr(a) for a in j[3]), j[2])
        if kind == "Load":
            tensor = self.tensors[j[1]]
            return E.TensorLoad(tensor, tuple(self.expr(i) for i in j[2]), tensor.dtype)
        if kind == "Reduce":
            source = self.expr(j[2])
            cond = None if j[4] is None else self.expr(j[4])
            axis = tuple(self.itervars[v] for v in j[3])
            return E.Reduce(j[1], source, axis, cond, source.dtype)
        raise DSLError(f"unknown expression kind {kind!r} in a serialized DAG")


def dag_from_json(data: dict) -> list[Tensor]:
    """Rebuild the output tensors of a DAG written by :func:`dag_to_json`."""
    if data.get("version") != FORMAT_VERSION:
        raise DSLError(
            f"serialized DAG has format version {data.get('version')!r}; this ansor_lab "
            f"reads version {FORMAT_VERSION}"
        )
    r = _Reader(data)
    for item in data["ops"]:
        if item["kind"] == "placeholder":
            op = PlaceholderOp(item["name"], tuple(item["shape"]), item["dtype"])
        else:
            axis = tuple(r.itervar(a) for a in item["axis"])
            reduce_axis = tuple(r.itervar(a) for a in item["reduce_axis"])
            body = r.expr(item["body"])
            op = ComputeOp(
                item["name"],
                axis,
                reduce_axis,
                (body,),
                item.get("tag", ""),
                dict(item.get("attrs", {})),
            )
        r.tensors.append(op.output(0))
    return [r.tensors[i] for i in data["outputs"]]


def structure_hash(tensors: list[Tensor]) -> str:
    """A stable hex digest of the DAG's structure, shapes, dtypes and names."""
    text = json.dumps(dag_to_json(tensors), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
