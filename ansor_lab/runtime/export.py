"""Saving a built module to files and loading it back (``export_library``, ``load_module``).

The object file carries what the module needs to be called again: a JSON description
(function name, parameters with shapes, dtypes and which are written, the target, the
bound checks) in the constant ``__ansor_lab_module_meta``. ``save("f.o")`` writes the
object, ``export_library("f.so")`` links it with the system's C compiler (``"f.tar"``
packs the object), and ``load_module`` reads any of the three back into a callable
Module.
"""

from __future__ import annotations

import ctypes
import json
import os
import tarfile
import tempfile
from typing import Any

import llvmlite.binding as llvm

from ..codegen.llvm import CompiledLLVM, load_object, with_tuning
from ..codegen.llvm_intrin_extra import LIBM_NAMES
from ..codegen.target import Target
from ..errors import CodegenError, RuntimeArgumentError
from ..ir import nodes as N
from .shared_library import create_shared

META = "__ansor_lab_module_meta"
#: functions an exported library may call: libc / libm / libgomp, and LLVM intrinsics
_ALLOWED_EXTERNALS = ("llvm.", "GOMP_", "omp_", "aligned_alloc", "free", "memset", "memcpy")


def _meta(module: Any) -> dict:
    return {
        "format": 1,
        "name": module.entry_name,
        "target": str(module.target),
        "params": [
            {
                "name": b.name,
                "shape": list(b.shape),
                "dtype": b.dtype,
                "written": b in module._outputs,
            }
            for b in module.func.params
        ],
        "bound_checks": [
            list(c) if isinstance(c, tuple) else c for c in module.compiled.bound_checks
        ],
    }


def _check_externals(mod: llvm.ModuleRef) -> None:
    for fn in mod.functions:
        if fn.is_declaration and not fn.name.startswith(_ALLOWED_EXTERNALS):
            libm = fn.name in LIBM_NAMES or fn.name.removesuffix("f") in LIBM_NAMES
            if not libm and not fn.name.startswith(("exp", "log", "sqrt", "tanh", "erf", "pow")):
                raise CodegenError(
                    f"this module calls {fn.name!r}, which lives in this process only, so it "
                    "cannot be exported; build it without half-precision casts on this CPU"
                )


def object_bytes(module: Any) -> bytes:
    """A position-independent object of the module's code plus its description."""
    text = json.dumps(_meta(module)).encode()
    escaped = "".join(f"\\{b:02X}" for b in text)
    ir_text = module.compiled.optimized_ir + (
        f'\n@{META} = constant [{len(text)} x i8] c"{escaped}"\n'
        f"@{META}_size = constant i64 {len(text)}\n"
    )
    mod = llvm.parse_assembly(ir_text)
    _check_externals(mod)
    target = module.target
    triple = llvm.get_process_triple()
    tgt = llvm.Target.from_triple(triple)
    feats = with_tuning(target.mattr or _host_features(target), triple)
    tm = tgt.create_target_machine(cpu=target.mcpu, features=feats, opt=3, reloc="pic")
    return tm.emit_object(mod)


def _host_features(target: Target) -> str:
    from ..codegen.target import host_cpu  # noqa: PLC0415 - only for exports

    name, features = host_cpu()
    return features if target.mcpu == name else ""


def save(module: Any, file_name: str, fmt: str = "") -> None:
    """``mod.save(path)``: ".o" object, ".ll" LLVM IR, ".s" assembly (by suffix or fmt)."""
    kind = fmt or os.path.splitext(str(file_name))[1].lstrip(".")
    if kind in ("o", "obj"):
        data: bytes | str = object_bytes(module)
    elif kind in ("ll", "llvm"):
        data = module.compiled.optimized_ir
    elif kind in ("s", "asm"):
        data = module.compiled.assembly()
    else:
        raise RuntimeArgumentError(
            f"save({file_name!r}): use a .o (object), .ll (LLVM IR) or .s (assembly) file; "
            "export_library('f.so') makes a shared library"
        )
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(file_name, mode) as f:
        f.write(data)


def export_library(module: Any, file_name: str, fcompile: Any = None, **kwargs: Any) -> None:
    """``mod.export_library(path)``: a shared library (.so), or a .tar holding the object."""
    path = str(file_name)
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, f"{module.entry_name}.o")
        save(module, obj)
        if path.endswith(".tar"):
            with tarfile.open(path, "w") as tar:
                tar.add(obj, arcname=os.path.basename(obj))
            return
        link = fcompile if callable(fcompile) else create_shared
        link(path, [obj], **kwargs)


def _module_from(meta: dict, handle: Any, entry: int, repeat: int) -> Any:
    from .module import Module  # noqa: PLC0415 - module imports this one

    params = tuple(N.Buffer(p["name"], tuple(p["shape"]), p["dtype"]) for p in meta["params"])
    func = N.PrimFunc(params, N.NOP, meta["name"])
    checks = tuple(tuple(c) if isinstance(c, list) else c for c in meta["bound_checks"])
    compiled = CompiledLLVM(handle, entry, repeat, "", "", None, None, [], 0, checks)
    mod = Module(func, Target(meta["target"]), compiled)
    mod._outputs = {b for b, p in zip(params, meta["params"]) if p["written"]}
    mod.loaded_from = True
    return mod


def _meta_of_object(data: bytes) -> dict:
    start = data.find(b'{"format": 1')
    if start < 0:
        raise RuntimeArgumentError("this object file was not saved by ansor_lab (no description)")
    meta, _ = json.JSONDecoder().raw_decode(data[start:].decode("utf-8", "replace"))
    return meta


def load_module(path: str, fmt: str = "") -> Any:
    """``tvm.runtime.load_module``: a module saved as .so, .o or .tar, ready to call."""
    path = str(path)
    if not os.path.exists(path):
        raise RuntimeArgumentError(f"load_module: no file {path!r}")
    kind = fmt or os.path.splitext(path)[1].lstrip(".")
    if kind in ("o", "obj"):
        with open(path, "rb") as f:
            data = f.read()
        meta = _meta_of_object(data)
        loaded = load_object(data, meta["name"], Target(meta["target"]))
        return _module_from(meta, loaded, loaded.entry_address, loaded.repeat_address)
    if kind == "tar":
        with tarfile.open(path) as tar, tempfile.TemporaryDirectory() as tmp:
            member = next((m for m in tar.getmembers() if m.name.endswith(".o")), None)
            if member is None:
                raise RuntimeArgumentError(f"{path!r} holds no object file")
            tar.extract(member, tmp, filter="data")
            return load_module(os.path.join(tmp, member.name))
    if kind in ("so", "dylib", "dll"):
        try:
            lib = ctypes.CDLL(os.path.abspath(path))
        except OSError as err:  # not a shared library at all (empty, truncated, text...)
            raise RuntimeArgumentError(
                f"load_module({path!r}): the file is not a shared library made by "
                f"export_library ({err}); export the built module with "
                "f.export_library('f.so') and load that file"
            ) from None
        try:
            size = ctypes.c_int64.in_dll(lib, f"{META}_size").value
        except ValueError:
            raise RuntimeArgumentError(
                f"{path!r} was not made from an ansor_lab module (no {META})"
            ) from None
        raw = (ctypes.c_char * size).in_dll(lib, META).raw
        meta = json.loads(raw.decode())
        entry = ctypes.cast(lib[meta["name"]], ctypes.c_void_p).value
        repeat = ctypes.cast(lib[meta["name"] + "__repeat"], ctypes.c_void_p).value
        return _module_from(meta, lib, entry, repeat)
    raise RuntimeArgumentError(f"load_module({path!r}): use a .so, .o or .tar file")
