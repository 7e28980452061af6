"""TVM public names ansor_lab does not provide: one error that says why and what to write.

``tvm.tir.call_packed`` after ``import ansor_lab as tvm`` would otherwise stop with a bare
``AttributeError``. The faces (``te``, ``tir``, the top level) give their module a
``__getattr__`` made by :func:`module_getattr` over one of the tables below: a name in the
table raises ``MissingNameError`` (an AttributeError too, so ``hasattr`` stays False) whose
message opens as Python's own, then says why and what to write instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import MissingNameError

_NO_TENSORIZE = (
    "ansor_lab has no tensor intrinsics (tensorize); write the inner computation as a "
    "te.compute loop and let s[T].vectorize / s[T].unroll (or sch.vectorize) map it to the "
    "CPU's vector instructions"
)
_NO_PACKED = (
    "ansor_lab has no packed-function runtime inside kernels; build the function with "
    "tvm.build and call it, or any Python function, from Python around it"
)
_NO_LAYOUT = (
    "ansor_lab has no data-layout objects; write the layout into the shapes and "
    "indices of te.compute (topi.layout_transform converts a tensor between layouts)"
)
_TE_INTERNAL = (
    "it is TE's internal form of a tensor access; index the tensor, A[i, j], inside "
    "te.compute (buffers are read with B[i, j] in TIR)"
)
_SCHEDULE_STATE = (
    "it is the schedule's internal state; use tir.Schedule's methods (get_block, get_loops, "
    "sch.mod, sch.trace) instead"
)
_NO_STMT = (
    "loop IR here has For, IfThenElse, LetStmt, BufferStore, Allocate, SeqStmt, Evaluate and "
    "Block statements only; "
)

#: ``tvm.te`` names that are out of scope, with why and what to write instead
TE: dict[str, str] = {
    "SpecializedCondition": (
        "symbolic shapes specialize to the arguments' shapes when the built function is "
        "called (one compiled version per shape); build it with te.var shapes and call it"
    ),
    "TensorSlice": (
        "a tensor is indexed with all of its indices at once, A[i, j], not one at a time (A[i][j])"
    ),
    "decl_tensor_intrin": _NO_TENSORIZE,
    "extern_primfunc": (
        "ansor_lab schedules and compiles only te.compute operators; write the PrimFunc's "
        "computation as a te.compute, or build the PrimFunc on its own and call it from "
        "Python"
    ),
}

#: ``tvm.tir`` names that are out of scope, with why and what to write instead
TIR: dict[str, str] = {
    "ProducerLoad": _TE_INTERNAL,
    "ProducerStore": _TE_INTERNAL,
    "Shuffle": (
        "vector lanes are formed by vectorize from the loops; write the element-wise "
        "access and vectorize the loop (sch.vectorize / s[T].vectorize)"
    ),
    "Let": (
        "expressions have no let-binding here; write the value where it is used (common "
        "subexpressions are shared by LLVM), or use the statement form tir.LetStmt"
    ),
    "Any": (
        "it is relay's unknown dimension; a dimension that varies is a shape variable: "
        "te.var('n') or tir.SizeVar('n', 'int32')"
    ),
    "AssertStmt": _NO_STMT + "check the condition in Python before calling the built "
    "function (a wrong argument shape is already a RuntimeArgumentError)",
    "While": _NO_STMT + "loops have a trip count known on entry; write a For loop over "
    "the largest count with an IfThenElse inside, or loop in Python around a built step",
    "AttrStmt": _NO_STMT + "loop annotations are For.annotations (sch.annotate, "
    "s[T].pragma) and thread bindings are For loops of kind thread_binding (bind)",
    "AllocateConst": _NO_STMT + "pass the constant array as an argument of the function, "
    "or write small constants into the expression (tir.Select / te.if_then_else)",
    "DeclBuffer": _NO_STMT + "a buffer is declared by tir.Allocate (T.alloc_buffer in "
    "TVMScript) or as a parameter (tir.decl_buffer)",
    "Prefetch": (
        "the CPU's hardware prefetchers follow the loops' strided accesses; leave it out "
        "(the result is the same)"
    ),
    "BufferRegion": (
        "the regions a block reads and writes are inferred from its body; TVMScript's "
        "T.reads / T.writes are accepted as descriptions; no region object is needed"
    ),
    "MatchBufferRegion": (
        "blocks read their buffers directly; index the outer buffer in the block body "
        "instead of matching a sub-buffer"
    ),
    "BlockRealize": (
        "a block's bindings live in the tir.Block itself (its leading LetStmts); write "
        "blocks in TVMScript (with T.block(...)) or build them with te.create_prim_func"
    ),
    "IndexMap": (
        "index maps are written as Python lambdas: sch.transform_layout(block, buffer, "
        "lambda i, j: (j, i))"
    ),
    "call_packed": _NO_PACKED,
    "call_tir": _NO_PACKED,
    "ret": (
        "PrimFuncs here return nothing: their outputs are argument buffers; write the "
        "result into an output buffer"
    ),
    "trace": (
        "kernels cannot call back into Python; print the lowered program with "
        "tvm.lower(...).show() and compare intermediate stages by building them as outputs"
    ),
    "ldexp": (
        "ldexp cannot be lowered on every backend here; write x * tir.exp2(n) with n as a "
        "float, or scale by a constant power of two"
    ),
    "reinterpret": (
        "bit casts cannot be lowered on every backend here; view the numpy array with "
        "arr.view(dtype) before or after calling the built function"
    ),
    "q_multiply_shift": (
        "fixed-point quantized arithmetic is out of scope; compute in float32 and cast "
        "(tir.Cast / te.compute(..., lambda i: x[i].astype('int8')))"
    ),
    "vscale": (
        "scalable vectors (SVE, RVV) are out of scope; vector widths are fixed by the "
        "target (Target('llvm -mcpu=...')) and split factors"
    ),
    "BlockScope": _SCHEDULE_STATE,
    "StmtSRef": _SCHEDULE_STATE,
    "ScheduleState": _SCHEDULE_STATE,
    "analysis": (
        "the TIR analysis passes are not exposed one by one; use tir.verify(func) to check "
        "a PrimFunc, tvm.ir.structural_equal to compare two, and te.ComputeDAG(tensors)"
        ".flop_ct for the FLOP count"
    ),
    "StringImm": (
        "the IR has no string values; the extern calls that take a name take it as a "
        "Python str (tir.call_extern('float32', 'expf', x))"
    ),
    "bijective_layout": _NO_LAYOUT,
    "BijectiveLayout": _NO_LAYOUT,
    "layout": _NO_LAYOUT,
    "Layout": _NO_LAYOUT,
}

_NO_INT_SETS = (
    "integer sets and iterator-map analysis are out of scope; "
    "tvm.arith.Analyzer().const_int_bound(expr) gives an expression's constant bounds and "
    "Analyzer().can_prove(cond) decides a condition"
)

#: ``tvm.arith`` names that are out of scope
ARITH: dict[str, str] = {
    name: _NO_INT_SETS
    for name in (
        "IntSet",
        "IntervalSet",
        "PresburgerSet",
        "IntConstraints",
        "IntConstraintsTransform",
        "IterMapExpr",
        "IterMark",
        "IterSplitExpr",
        "IterSumExpr",
        "detect_iter_map",
        "iter_map_simplify",
        "normalize_iter_map_to_expr",
        "subspace_divide",
        "inverse_affine_iter_map",
        "estimate_region_lower_bound",
        "estimate_region_strict_bound",
        "estimate_region_upper_bound",
        "detect_linear_equation",
        "detect_clip_bound",
        "deduce_bound",
        "domain_touched",
        "solve_linear_equations",
        "solve_linear_inequalities",
        "pos_inf",
        "neg_inf",
    )
}

_NO_RELAY_BUILD = (
    "it applies tuned schedules while relay builds a network, and relay is out of scope; "
    "apply the best record of each task yourself: sch, args = task.apply_best(log_file), "
    "then tvm.build(sch, args, target) (auto_scheduler.load_best_record(log_file, task) "
    "gives the record itself)"
)

#: ``tvm.auto_scheduler`` names that are out of scope, with why and what to write instead
AUTO_SCHEDULER: dict[str, str] = {
    "ApplyHistoryBest": _NO_RELAY_BUILD,
    "ApplyHistoryBestOrSample": _NO_RELAY_BUILD,
    "extract_tasks": (
        "it reads the tasks out of a relay network, and relay is out of scope; create one "
        "auto_scheduler.SearchTask(func=..., args=..., target=...) per operator (write the "
        "layers with topi) and tune them together with auto_scheduler.TaskScheduler(tasks)"
    ),
}

#: top-level ``tvm.`` names that are out of scope, with why and what to write instead
TOP: dict[str, str] = {
    "instrument": (
        "pass instruments are out of scope: lowering is one fixed pipeline; print the "
        "program it builds with tvm.lower(...).show(), and time a built function with "
        "f.time_evaluator(...)"
    ),
}


_NO_NODE_JSON = (
    "programs here are Python values, not TVM's node objects: keep a program as its "
    "TVMScript text (func.script(), parsed back by tvm.script.from_source), a schedule as its "
    "trace (sch.trace.as_json(), Trace.from_json) and a search as its records "
    "(auto_scheduler.save_records / load_records)"
)
_NO_TYPE_NODES = (
    "types are dtype strings here ('float32', 'int32'), and a buffer stands for its own "
    "pointer (tir.decl_buffer)"
)

#: ``tvm.ir`` names that are out of scope, with why and what to write instead
IR: dict[str, str] = {
    "save_json": _NO_NODE_JSON,
    "load_json": _NO_NODE_JSON,
    "make_node": _NO_NODE_JSON,
    "structural_hash": (
        "compare programs with tvm.ir.structural_equal (or assert_structural_equal); to key "
        "a dict by a program, use its printed text, func.script()"
    ),
    "GlobalVar": (
        "an IRModule here maps plain names to PrimFuncs: tvm.IRModule({'main': f}), mod['main']"
    ),
    "PrimType": _NO_TYPE_NODES,
    "PointerType": _NO_TYPE_NODES,
    "Array": "Python lists and tuples stand in for TVM's Array",
    "Map": "Python dicts stand in for TVM's Map",
    "instrument": TOP["instrument"],
}


def missing_name(module: str, name: str, why: str) -> MissingNameError:
    """The error for ``module.name``: Python's opening, then why and what to write."""
    short = module.removeprefix("ansor_lab.").removeprefix("ansor_lab")
    spelled = f"tvm.{short}.{name}" if short else f"tvm.{name}"
    return MissingNameError(
        f"module {module!r} has no attribute {name!r}: {spelled} is not provided: {why}"
    )


def module_getattr(module: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` raising ``missing_name`` for the names in ``table``
    and Python's plain AttributeError for any other."""

    def __getattr__(name: str) -> Any:
        if name in table:
            raise missing_name(module, name, table[name])
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
