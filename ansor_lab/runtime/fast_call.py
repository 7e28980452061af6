"""A kernel called on numpy arrays in one native step: the checks and the call in machine code.

A call from Python checked each array in Python (shape, strides, dtype, writeable, the
outputs' overlap) and read each data pointer, then called the kernel through ctypes: 2.9
to 5 us for two arrays on a Zen 3, more than many small kernels take, and what a loop of
calls measures. Here a module's call is a builtin function (``PyCFunction_NewEx`` over
code generated once per arity, ``_trampoline``; METH_FASTCALL, as CPython's own builtins)
that receives the array objects themselves and checks what the Python path checks, reading
the fields of numpy's array struct (``PyArrayObject_fields``: the data pointer, ``nd``,
``dimensions``, ``strides``, ``descr``, ``flags``) against a table per module
(``fast_call``), then releases the GIL around the kernel as ctypes did: 0.6 us a call
(numpy's ``np.add(a, 1, out=b)`` on 8 floats: 1.1 us). Where anything differs (another
type, a strided view, a byte-swapped dtype, a read-only output, overlapping outputs, the
wrong number of arrays) it returns ``NOT_FAST`` without calling the kernel, and ``Module``
takes the Python path, which accepts what is fine (an extent-1 axis with any stride, an
``NDArray``) and raises the error that says what to do.

The field offsets are found at import by probing arrays whose values are known (as
``data_address`` finds the data pointer); where any probe disagrees, or the interpreter
is not CPython with a GIL, there is no native call.
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from llvmlite import binding as llvm, ir

#: returned where a check fails (kernels return 0, -1..-3 or <= -1000: ``codegen.failures``)
NOT_FAST = -999
#: numpy's NPY_ARRAY_WRITEABLE flag
_WRITEABLE = 0x0400

_i8p = ir.IntType(8).as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


@dataclass(frozen=True)
class Layout:
    """Byte offsets of the fields of numpy's array object."""

    data: int
    nd: int
    dims: int
    strides: int
    descr: int
    flags: int


def _i64_at(address: int) -> int:
    return ctypes.c_int64.from_address(address).value


def _agrees(a: np.ndarray, lay: Layout) -> bool:
    base = id(a)
    dims, strides = _i64_at(base + lay.dims), _i64_at(base + lay.strides)
    return (
        _i64_at(base + 8) == id(np.ndarray)  # ob_type follows ob_refcnt
        and _i64_at(base + lay.data) == a.ctypes.data
        and ctypes.c_int32.from_address(base + lay.nd).value == a.ndim
        and all(_i64_at(dims + 8 * d) == n for d, n in enumerate(a.shape))
        and all(_i64_at(strides + 8 * d) == s for d, s in enumerate(a.strides))
        and _i64_at(base + lay.descr) == id(a.dtype)
        and bool(ctypes.c_int32.from_address(base + lay.flags).value & _WRITEABLE)
        == a.flags.writeable
    )


def _find_layout() -> Layout | None:
    if sys.implementation.name != "cpython" or sys.maxsize != 2**63 - 1:
        return None
    # PyObject_HEAD, then: data, nd (int, padded), dimensions, strides, base, descr, flags
    lay = Layout(data=16, nd=24, dims=32, strides=40, descr=56, flags=64)
    ro = np.arange(6.0).reshape(2, 3)[:, ::2]
    ro.flags.writeable = False
    probes = [np.empty((3, 4), "float32"), ro, np.zeros((), "int8"), np.ones(5, "int64")[1:]]
    return lay if all(_agrees(p, lay) for p in probes) else None


LAYOUT = _find_layout()


def _load(b: ir.IRBuilder, base: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    addr = b.gep(base, [ir.Constant(_i64, offset)])
    return b.load(b.bitcast(addr, ty.as_pointer()))


#: the C API functions the trampoline calls, by address (CPython with its GIL only)
_API = ("PyCapsule_GetPointer", "PyEval_SaveThread", "PyEval_RestoreThread", "PyLong_FromLong")
#: METH_FASTCALL: ``f(self, PyObject *const *args, Py_ssize_t nargs)``
_METH_FASTCALL = 0x0080


def _api_addresses() -> dict[str, int]:
    return {
        name: ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value for name in _API
    }


def _trampoline_ir(n: int, lay: Layout, api: dict[str, int]) -> str:
    """A builtin ``call(*arrays)`` of ``n`` arrays (METH_FASTCALL; ``self`` a capsule of
    the table): ``entry(data0, ...)`` with the GIL released, after the checks; returns
    the kernel's code as an int, ``NOT_FAST`` where a check fails. ``table``:
    ``[ndarray type, entry, record offset of each argument...]``, each record ``[nd,
    descr, written, nbytes, dims..., strides...]``."""
    mod = ir.Module(name=f"fast_call_{n}")
    i64p = _i64.as_pointer()
    kernel_ty = ir.FunctionType(_i32, [_i8p] * n)
    fn_ty = ir.FunctionType(_i8p, [_i8p, _i8p.as_pointer(), _i64])
    fn = ir.Function(mod, fn_ty, name="call")
    capsule, argv, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fail = fn.append_basic_block("fail")

    def c_api(name: str, ret: ir.Type, params: list) -> ir.Value:
        ty = ir.FunctionType(ret, params)
        return b.inttoptr(ir.Constant(_i64, api[name]), ty.as_pointer())

    def need(cond: ir.Value, label: str) -> None:
        ok = fn.append_basic_block(label)
        b.cbranch(cond, ok, fail)
        b.position_at_end(ok)

    def eq(x: ir.Value, y: ir.Value) -> ir.Value:
        return b.icmp_unsigned("==", x, y)

    from_long = c_api("PyLong_FromLong", _i8p, [_i64])  # here: the fail block uses it too
    need(eq(nargs, _i64(n)), "arity")
    get_pointer = c_api("PyCapsule_GetPointer", _i8p, [_i8p, _i8p])
    table = b.bitcast(b.call(get_pointer, [capsule, ir.Constant(_i8p, None)]), i64p)
    ndarray, entry = b.load(table), b.load(b.gep(table, [_i64(1)]))
    arrays = [b.load(b.gep(argv, [_i64(k)])) for k in range(n)]
    datas, sizes, written = [], [], []
    for k, arr in enumerate(arrays):
        rec = b.gep(table, [b.load(b.gep(table, [_i64(2 + k)]))])
        field = [b.load(b.gep(rec, [ir.Constant(_i64, f)])) for f in range(4)]
        nd, descr, wrote, nbytes = field
        need(eq(_load(b, arr, 8, _i64), ndarray), f"a{k}_type")
        need(eq(b.sext(_load(b, arr, lay.nd, _i32), _i64), nd), f"a{k}_nd")
        need(eq(_load(b, arr, lay.descr, _i64), descr), f"a{k}_dtype")
        flags = b.zext(_load(b, arr, lay.flags, _i32), _i64)
        writable = b.icmp_unsigned("!=", b.and_(flags, ir.Constant(_i64, _WRITEABLE)), _i64(0))
        need(b.or_(eq(wrote, _i64(0)), writable), f"a{k}_writeable")
        dims, strides = _load(b, arr, lay.dims, i64p), _load(b, arr, lay.strides, i64p)
        # for d in range(nd): dims[d] == rec[4 + d] and strides[d] == rec[4 + nd + d]
        head, body, done = (fn.append_basic_block(f"a{k}_{s}") for s in ("head", "dim", "done"))
        before = b.block
        b.branch(head)
        b.position_at_end(head)
        d = b.phi(_i64)
        d.add_incoming(_i64(0), before)
        b.cbranch(b.icmp_signed("<", d, nd), body, done)
        b.position_at_end(body)
        want_dim = b.load(b.gep(rec, [b.add(d, _i64(4))]))
        want_stride = b.load(b.gep(rec, [b.add(b.add(d, nd), _i64(4))]))
        same = b.and_(
            eq(b.load(b.gep(dims, [d])), want_dim), eq(b.load(b.gep(strides, [d])), want_stride)
        )
        need(same, f"a{k}_same")
        d.add_incoming(b.add(d, _i64(1)), b.block)
        b.branch(head)
        b.position_at_end(done)
        datas.append(_load(b, arr, lay.data, _i8p))
        sizes.append(nbytes)
        written.append(wrote)
    # an output may share no byte with another argument (the kernel assumes distinct buffers)
    for i in range(n):
        for j in range(i + 1, n):
            lo, hi = b.ptrtoint(datas[i], _i64), b.ptrtoint(datas[j], _i64)
            apart = b.or_(
                b.icmp_unsigned(">=", lo, b.add(hi, sizes[j])),
                b.icmp_unsigned(">=", hi, b.add(lo, sizes[i])),
            )
            neither = eq(b.or_(written[i], written[j]), _i64(0))
            need(b.or_(apart, neither), f"a{i}_a{j}_apart")
    state = b.call(c_api("PyEval_SaveThread", _i8p, []), [])  # the kernel runs without the GIL
    rc = b.call(b.inttoptr(entry, kernel_ty.as_pointer()), datas)
    b.call(c_api("PyEval_RestoreThread", ir.VoidType(), [_i8p]), [state])
    b.ret(b.call(from_long, [b.sext(rc, _i64)]))
    b.position_at_end(fail)
    b.ret(b.call(from_long, [_i64(NOT_FAST)]))
    return str(mod)


class _MethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


#: arity -> (the engine that owns the code, its method definition)
_TRAMPOLINES: dict[int, tuple[object, _MethodDef]] = {}


def _trampoline(n: int) -> _MethodDef:
    if n not in _TRAMPOLINES:
        from ..codegen.llvm import target_machine  # noqa: PLC0415 - initializes LLVM

        tm = target_machine("generic", "")
        mod = llvm.parse_assembly(_trampoline_ir(n, LAYOUT, _api_addresses()))
        mod.verify()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        method = _MethodDef(b"kernel_call", engine.get_function_address("call"), _METH_FASTCALL)
        # two threads may both build it: the first stored is the one every caller uses
        _TRAMPOLINES.setdefault(n, (engine, method))
    return _TRAMPOLINES[n][1]


#: id(call) -> what its capsule points at (the table, the dtypes it names), while it lives
_KEEP: dict[int, tuple] = {}

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = (ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)


def _gil_enabled() -> bool:
    check = getattr(sys, "_is_gil_enabled", None)  # 3.13+: False on a free-threaded build
    return check() if check is not None else True


def fast_call(specs: list, entry_address: int) -> Callable | None:
    """``call(*arrays)``: the kernel's return code, or ``NOT_FAST`` where an argument is
    not exactly what the Python path passes as is. None where there is no native call
    (no known array layout or no GIL, a shape that is not all ints, no or over 64
    parameters).

    ``specs``: ``(name, shape, dtype, written, C strides, nbytes)`` per parameter.
    """
    n = len(specs)
    if LAYOUT is None or not _gil_enabled() or not 0 < n <= 64:
        return None
    if any(s[4] is None for s in specs):
        return None
    table = [id(np.ndarray), entry_address] + [0] * n
    for k, (_, shape, dtype, wrote, strides, nbytes) in enumerate(specs):
        table[2 + k] = len(table)
        table += [len(shape), id(dtype), int(wrote), nbytes, *shape, *strides]
    native = (ctypes.c_int64 * len(table))(*table)
    capsule = _new_capsule(ctypes.addressof(native), None, None)
    call = _new_function(ctypes.addressof(_trampoline(n)), capsule, None)
    # the function holds the capsule; the capsule only points at the table and the table
    # names the dtype objects by address: all kept alive with the module that holds it
    _KEEP[id(call)] = (native, [s[2] for s in specs])
    weakref.finalize(call, _KEEP.pop, id(call), None)
    return call
