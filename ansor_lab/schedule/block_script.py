"""``te.create_prim_func(...)`` printed as TVM prints TensorIR: blocks, axes, reads, init.

An unscheduled function made from compute definitions prints in TVM's block form (each
stage a ``T.block`` in a ``T.grid`` of its own axes, ``T.axis.remap``, ``T.reads`` /
``T.writes``, ``T.init()`` for reductions); ``tvm.script.from_source`` parses that text
back to a structurally equal function. A schedule's module prints the block form of its
State (``block_view``, ``block_emit``); lowered functions (``tvm.lower``) keep the loop
form (``ir.printer``).
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.dag import topo_order
from ..dsl.printer import text
from ..dsl.tensor import ComputeOp, PlaceholderOp
from ..dsl.tuple_reduce import is_companion, tuple_combiner
from ..ir import nodes as N, printer

_IDENTITY_UPDATE = {"sum": "{o} + {v}", "max": "T.max({o}, {v})", "min": "T.min({o}, {v})"}


def _shape(shape: tuple) -> str:
    inner = ", ".join(str(int(s)) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _loads(e: E.PrimExpr) -> list[str]:
    seen: list[str] = []
    for x in E.post_order(e):
        if isinstance(x, E.TensorLoad):
            t = f"{x.tensor.name}[{', '.join(text(i) for i in x.indices)}]"
            if t not in seen:
                seen.append(t)
    return seen


def _tuple_update(op: ComputeOp, body: E.Reduce, block_vars: dict) -> tuple[list, list]:
    """(reads, lines) of a tuple reduction's block, as TVM prints it: the init of every
    output, each combined value into a temporary, then the stores."""
    comb = body.combiner
    idx = ", ".join(block_vars[iv.var].name for iv in op.axis)
    outs = [f"{o.name}[{idx}]" for o in comb.group.ops]
    srcs = [E.substitute(x, block_vars) for x in body.source.args]
    loads = {v: E.Var(o) for v, o in zip(comb.lhs, outs)} | dict(zip(comb.rhs, srcs))
    reads = []
    for x in srcs:
        reads += [r for r in _loads(x) if r not in reads]
    reads += outs
    lines = ["with T.init():"]
    lines += [f"    {o} = {text(v)}" for o, v in zip(outs, comb.identities)]
    temps = [f"v_{o.name}" for o in comb.group.ops]
    for t, r, o in zip(temps, comb.results, comb.group.ops):
        lines.append(f"{t}: T.{o.dtype} = {text(E.substitute(r, loads))}")
    lines += [f"{o} = {t}" for o, t in zip(outs, temps)]
    return reads, lines


def _stage_lines(op: ComputeOp) -> list[str]:
    axes = list(op.axis) + list(op.reduce_axis)
    names = [iv.var.name for iv in axes]
    block_vars = {iv.var: E.Var(f"v_{iv.var.name}") for iv in axes}
    body = E.substitute(op.body[0], block_vars)
    kinds = "S" * len(op.axis) + "R" * len(op.reduce_axis)
    out_idx = ", ".join(block_vars[iv.var].name for iv in op.axis)
    out = f"{op.name}[{out_idx}]"
    extents = ", ".join(str(int(iv.dom.extent)) for iv in axes)
    lines = [f"for {', '.join(names)} in T.grid({extents}):"]
    lines.append(f'    with T.block("{op.name}"):')
    vs = ", ".join(block_vars[iv.var].name for iv in axes)
    lines.append(f'        {vs} = T.axis.remap("{kinds}", [{", ".join(names)}])')
    if tuple_combiner(body) is not None:
        reads, update = _tuple_update(op, body, block_vars)
        outs = ", ".join(f"{o.name}[{out_idx}]" for o in body.combiner.group.ops)
        lines.append(f"        T.reads({', '.join(reads)})")
        lines.append(f"        T.writes({outs})")
        return lines + ["        " + ln for ln in update]
    source = body.source if isinstance(body, E.Reduce) else body
    lines.append(f"        T.reads({', '.join(_loads(source))})")
    lines.append(f"        T.writes({out})")
    if isinstance(body, E.Reduce):
        from ..dsl.intrin import reduce_identity  # noqa: PLC0415 - only reductions need it

        value = source
        if body.condition is not None:
            zero = reduce_identity(body.combiner, body.dtype)
            value = E.if_then_else(body.condition, source, zero)
        lines.append("        with T.init():")
        lines.append(f"            {out} = {text(reduce_identity(body.combiner, body.dtype))}")
        update = _IDENTITY_UPDATE[body.combiner].format(o=out, v=text(value))
        lines.append(f"        {out} = {update}")
    else:
        lines.append(f"        {out} = {text(body)}")
    return lines


def block_form(func: N.PrimFunc) -> str | None:
    """The block-form text of an unscheduled ``create_prim_func`` result, else None."""
    src = func.source
    if getattr(src, "body", None) is not func.body or getattr(src, "args", None) is None:
        return None
    args = list(src.args)
    params = ", ".join(f'{b.name}: T.Buffer({_shape(b.shape)}, "{b.dtype}")' for b in func.params)
    lines = ["@T.prim_func", f"def {func.name}({params}):"]
    if getattr(src, "binding", ()):  # symbolic shapes: with the variables where possible
        text = _symbolic_block_form(src, func.name)
        if text is not None:
            return text
        shown = ", ".join(f"{v.name} = {x}" for v, x in src.binding)
        lines.insert(0, f"# symbolic shapes, printed at the probe values {shown}")
    arg_names = {t.name for t in args}
    ops = topo_order([t for t in args if not isinstance(t.op, PlaceholderOp)])
    for op in ops:
        if isinstance(op, ComputeOp) and op.name not in arg_names:
            t = op.output(0)
            lines.append(f'    {op.name} = T.alloc_buffer({_shape(t.shape)}, "{t.dtype}")')
    for op in ops:
        if isinstance(op, ComputeOp) and not is_companion(op):  # its primary writes it
            lines += ["    " + ln for ln in _stage_lines(op)]
    return "\n".join(lines)


def _symbolic_block_form(src, name: str) -> str | None:
    """The block form of a symbolic DAG's function with its shape variables."""
    from ..dsl import symbolic as S  # noqa: PLC0415 - only symbolic functions need it
    from .create import create_prim_func  # noqa: PLC0415 - create imports this module
    from .symbolic_print import symbolic_text  # noqa: PLC0415 - as above

    args = list(src.symbolic_args)

    def at(binding: dict) -> str:
        if getattr(src, "reparse", None) is not None:  # a parsed script: parsed per shape
            return src.reparse(binding).with_name(name).script()
        return create_prim_func(S.specialize(args, binding)[0], name=name).script()

    return symbolic_text(at, S.shape_vars(args))


printer.SCRIPT_HOOKS.append(block_form)
