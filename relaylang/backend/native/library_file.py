"""The one-file library: `lib.export_library(path)` and `rl.runtime.load_module(path)`.

A zip archive (stored, not compressed: object code and weights do not shrink much):

    manifest.json        format, versions (relaylang, llvmlite, numpy, our codegen), the
                         target (triple, CPU name, CPU features), the mode ("graph" or
                         "mixed"), the entry, the kernel modules and their kernels; in
                         mixed mode also which kernel runs which primitive function for
                         which argument types (those compiled at build and those
                         specialised for the shapes met before the export)
    kernels/N.o          object code of kernel module N (loaded into MCJIT as it is)
    kernels/N.ll         its LLVM IR before optimisation (for get_source only)
    plan.json            graph mode: the execution plan (native/plan.py)
    constants/N.npy      graph mode: the constants bound at build (params included)
    fallback.relay       graph mode: the primitive functions without a native lowering,
                         and those of steps run through a callback (`extern.py`: an
                         external function, a BYOC target's partitioned function, whose
                         codegen runs again at load), as Relay text (parsed at load
                         only when there are some)
    module.relay         mixed mode: the optimised module (the control part runs on the
                         interpreter's machine, so it is parsed and typed at load; no
                         pass and no LLVM optimisation runs)
    program/program.o    program mode: the object code of the whole native program
                         (control code and kernels: `NativeProgram.export()`)
    program/program.ll   its LLVM IR before optimisation (for get_source only)
    program/program.json program mode: the core's metadata (entry symbols, signatures)
                         and per compiled global its parameters' names and types, result
                         type and spans (for errors); nothing is parsed at load

Loading checks the target first: object code built for CPU features the host lacks
refuses to load with a message naming them (`LibraryLoadError`).
"""
from __future__ import annotations

import io
import json
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ...ir.expr import Function
    from .library import Library

FORMAT = "relaylang-library"
FORMAT_VERSION = 1


class LibraryLoadError(ValueError):
    """A library file that cannot be loaded here (corrupt, foreign CPU, other format)."""


def _manifest(lib: Library, mode: str) -> dict[str, Any]:
    import sys

    from .kernels import host_target
    __version__ = getattr(sys.modules.get("relaylang"), "__version__", "unknown")
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "relaylang": __version__,
        "numpy": np.__version__, "target": host_target(), "mode": mode, "entry": lib.entry,
        "fallback_ops": lib.fallback_ops, "kernel_names": lib.kernel_names,
        "modules": [{"object": f"kernels/{i}.o", "ir": f"kernels/{i}.ll",
                     "infos": [info.to_json() for info in m.infos]}
                    for i, m in enumerate(lib.modules)],
    }


def _write_modules(z: zipfile.ZipFile, lib: Library) -> None:
    for i, m in enumerate(lib.modules):
        z.writestr(f"kernels/{i}.o", m.object_code)
        z.writestr(f"kernels/{i}.ll", m.raw_ir)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(array, order="C"), allow_pickle=False)
    return buf.getvalue()


def _write(path: str, fill: Any) -> None:
    from pathlib import Path
    tmp = Path(str(path) + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
        fill(z)
    tmp.replace(path)


def export_graph(path: str, lib: Library, fallbacks: dict[str, Function]) -> None:
    assert lib.graph is not None
    plan = lib.graph.plan

    def fill(z: zipfile.ZipFile) -> None:
        z.writestr("manifest.json", json.dumps(_manifest(lib, "graph"), indent=1))
        z.writestr("plan.json", json.dumps(plan.to_json()))
        for i, c in enumerate(lib.graph.constants):
            z.writestr(f"constants/{i}.npy", _npy(c))
        _write_modules(z, lib)
        if fallbacks:
            z.writestr("fallback.relay", _functions_text(fallbacks))
    _write(path, fill)


def export_mixed(path: str, lib: Library) -> None:
    from ...syntax.printer import astext
    assert lib.mixed is not None
    kernels = lib.mixed.kernels

    def fill(z: zipfile.ZipFile) -> None:
        from .plan import type_to_json
        manifest = _manifest(lib, "mixed")
        # Every native kernel made so far (at build, and for the shapes met since): the
        # primitive function's position, the argument types it was made for, its module
        # and name, and its result type.
        index = {id(m): i for i, m in enumerate(lib.modules)}
        manifest["kernels"] = [
            [pos, types, index[id(call.kernel.module)], call.name,
             type_to_json(call.result_type)]
            for pos, types, call in kernels.native_runners()
            if id(call.kernel.module) in index and call.result_type is not None]
        z.writestr("manifest.json", json.dumps(manifest, indent=1))
        z.writestr("module.relay", astext(lib.mixed.mod, show_meta_data=True))
        _write_modules(z, lib)
    _write(path, fill)


def export_program(path: str, lib: Library) -> None:
    assert lib.program is not None
    runtime = lib.program
    object_code, meta = runtime.program.export()
    raw_ir = getattr(runtime.program.compiled, "raw_ir", "") or ""

    def fill(z: zipfile.ZipFile) -> None:
        z.writestr("manifest.json", json.dumps(_manifest(lib, "program"), indent=1))
        z.writestr("program/program.o", object_code)
        z.writestr("program/program.ll", raw_ir)
        z.writestr("program/program.json", json.dumps({
            "native": meta,
            "functions": {name: f.to_json() for name, f in runtime.functions.items()}}))
    _write(path, fill)


def _functions_text(functions: dict[str, Function]) -> str:
    from ...ir.expr import GlobalVar
    from ...ir.module import IRModule
    from ...syntax.printer import astext
    mod = IRModule({GlobalVar(name): fn for name, fn in functions.items()})
    return astext(mod, show_meta_data=True)


# ---------------------------------------------------------------- loading

def _features(text: str) -> set[str]:
    return {f[1:] for f in text.split(",") if f.startswith("+")}


def check_target(target: dict[str, str], path: str) -> None:
    """Raise LibraryLoadError when code built for `target` cannot run on this host."""
    from .kernels import host_target
    host = host_target()
    if target.get("triple") != host["triple"]:
        raise LibraryLoadError(f"{path}: built for {target.get('triple')}, this machine is "
                               f"{host['triple']}")
    missing = sorted(_features(target.get("features", "")) - _features(host["features"]))
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8
                                          else "")
        raise LibraryLoadError(
            f"{path}: built for CPU {target.get('cpu')!r} with features this CPU "
            f"({host['cpu']!r}) lacks: {shown}; rebuild it here with `relay build`")


def load(path: str) -> Library:
    """The library in `path` (see the module docstring)."""
    try:
        z = zipfile.ZipFile(path)
    except FileNotFoundError as e:
        raise LibraryLoadError(f"{path}: no such file") from e
    except (OSError, zipfile.BadZipFile) as e:
        raise LibraryLoadError(f"{path}: not a relaylang library ({e})") from e
    with z:
        try:
            manifest = json.loads(z.read("manifest.json"))
        except (KeyError, ValueError) as e:
            raise LibraryLoadError(f"{path}: not a relaylang library (no manifest)") from e
        if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
            raise LibraryLoadError(f"{path}: not a relaylang library of format "
                                   f"{FORMAT_VERSION}")
        check_target(manifest.get("target", {}), path)
        try:
            if manifest["mode"] == "graph":
                return _load_graph(z, manifest, path)
            if manifest["mode"] == "program":
                return _load_program(z, manifest, path)
            return _load_mixed(z, manifest, path)
        except LibraryLoadError:
            raise
        except (KeyError, ValueError, TypeError, zipfile.BadZipFile) as e:
            raise LibraryLoadError(f"{path}: damaged library file ({type(e).__name__}: "
                                   f"{e})") from e


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples they were."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _load_modules(z: zipfile.ZipFile, manifest: dict[str, Any]) -> list[Any]:
    from .kernels import load_native
    modules = []
    for m in manifest["modules"]:
        module = load_native(z.read(m["object"]), m["infos"])
        module.raw_ir = z.read(m["ir"]).decode() if m.get("ir") in z.namelist() else ""
        modules.append(module)
    return modules


def _load_graph(z: zipfile.ZipFile, manifest: dict[str, Any], path: str) -> Library:
    from .graph_runtime import GraphRuntime
    from .kernels import Fallback, NativeCall
    from .library import Library
    from .plan import Plan
    data = json.loads(z.read("plan.json"))
    n_constants = len([n for n in z.namelist() if n.startswith("constants/")])
    constants = [np.load(io.BytesIO(z.read(f"constants/{i}.npy")), allow_pickle=False)
                 for i in range(n_constants)]
    plan = Plan.from_json(data, constants)
    modules = _load_modules(z, manifest)
    kernels = {name: k for m in modules for name, k in m.kernels.items()}
    fallback_fns: dict[str, Any] = {}
    if "fallback.relay" in z.namelist():
        from ...syntax.parser import parse
        mod = parse(z.read("fallback.relay").decode(), source_name=f"{path}:fallback.relay")
        if any(step.extern for step in plan.steps):
            from ...typing import infer_types
            mod = infer_types(mod)
        fallback_fns = {gv.name_hint: fn for gv, fn in mod.functions.items()}
    runners: list[Any] = []
    made: dict[str, Any] = {}
    for step in plan.steps:
        if step.kernel not in made:
            if step.extern:
                made[step.kernel] = _extern_runner(step, fallback_fns[step.kernel], path)
            elif step.native:
                made[step.kernel] = NativeCall(step.kernel, kernels[step.kernel], ops=step.ops)
            else:
                made[step.kernel] = Fallback(fallback_fns[step.kernel])
        runners.append(made[step.kernel])
    graph = GraphRuntime(plan, runners)
    lib = Library(entry=manifest["entry"], graph=graph,
                  fallback_ops=set(manifest.get("fallback_ops", ())), modules=modules,
                  kernel_names=manifest.get("kernel_names", []))
    fallbacks = fallback_fns
    lib._export = lambda out: export_graph(out, lib, fallbacks)
    return lib


def _extern_runner(step: Any, fn: Any, path: str) -> Any:
    """The callback step of an exported library: the external function's, or the
    partitioned function's made again by its target's codegen."""
    from ..byoc.runner import external_function
    from .extern import codegen_call, dps_call
    if step.extern == "dps":
        call = dps_call(fn, step.kernel)
    else:
        ext = external_function(fn, step.kernel)
        if ext is None:
            raise LibraryLoadError(f"{path}: the library runs @{step.kernel} with the BYOC "
                                   f"target `{step.extern}`, which has no codegen here")
        call = codegen_call(ext)
    if call is None:
        raise LibraryLoadError(f"{path}: damaged library file (step {step.kernel})")
    return call


def _load_program(z: zipfile.ZipFile, manifest: dict[str, Any], path: str) -> Library:
    """A program library: its object code loaded as it is (no parsing, no passes, no LLVM
    optimisation)."""
    from ..llvm.control import load_program
    from .library import Library, ProgramFunction, ProgramRuntime
    data = json.loads(z.read("program/program.json"))
    raw_ir = (z.read("program/program.ll").decode()
              if "program/program.ll" in z.namelist() else "")
    try:
        from .extern import program_extern
        program = load_program(z.read("program/program.o"), data["native"], raw_ir,
                               externs=program_extern)
    except ValueError as e:          # another compiler or CPU than the manifest says
        raise LibraryLoadError(f"{path}: {e}; rebuild it here with `relay build`") from e
    functions = {str(name): ProgramFunction.from_json(f)
                 for name, f in data["functions"].items()}
    runtime = ProgramRuntime(program, functions)
    lib = Library(entry=manifest["entry"], program=runtime,
                  kernel_names=manifest.get("kernel_names", sorted(functions)))
    lib._export = lambda out: export_program(out, lib)
    return lib


def _load_mixed(z: zipfile.ZipFile, manifest: dict[str, Any], path: str) -> Library:
    from ...syntax.parser import parse
    from ...typing import infer_types
    from .kernels import NativeCall, op_names
    from .library import Library
    from .mixed import MixedRuntime, PrimitiveKernels, primitive_functions
    from .plan import type_from_json
    mod = infer_types(parse(z.read("module.relay").decode(), source_name=f"{path}:module.relay"))
    modules = _load_modules(z, manifest)
    kernels = PrimitiveKernels()
    kernels.modules.extend(modules)
    by_position = dict(primitive_functions(mod))
    for pos, types, index, name, result in manifest.get("kernels", []):
        fn = by_position.get(pos)
        if fn is not None:
            call = NativeCall(name, modules[index].kernels[name], type_from_json(result),
                              op_names(fn), fn.body.span or fn.span)
            kernels.restore(fn, _tuples(types), call)
    kernels.prebuild(mod)          # compiles only what the file lacks (nothing, normally)
    kernels.fallback_ops.update(manifest.get("fallback_ops", ()))
    runtime = MixedRuntime(mod, kernels)
    lib = Library(entry=manifest["entry"], mixed=runtime, modules=kernels.modules,
                  kernel_names=manifest.get("kernel_names", []))
    lib._export = lambda out: export_mixed(out, lib)
    return lib
