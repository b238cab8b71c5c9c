"""`relay import MODEL.onnx`: an ONNX model as a Relay program (`rl.frontend.from_onnx`).

    relay import model.onnx -o model.relay --params-out model.npz   # weights in an archive
    relay import model.onnx --inline-params > model.relay           # weights as constants
    relay import model.onnx --shape data=1,3,224,224 --opset 13
    relay import reduce.onnx --bind axes=1,2     # an axes input fed at run time, fixed

The program text goes to `-o OUT` or standard output, laid out as `relay fmt` writes it
(without the `/* ty=... */` notes of the checked types). The model's weights (initializers)
are `@main` parameters: `--params-out P.npz` writes them to a NumPy archive keyed by those
parameter names, which `relay run --params` and `relay build --params` read;
`--inline-params` makes them constants of the program instead (its `#[metadata]` section);
with neither, they stay parameters and a note on stderr says so. `--shape NAME=D,D,...`
fixes an input's dims (`?` or -1 for a dim left unknown); `--opset N` converts as opset N.
`--bind NAME=V,V,...` makes graph input NAME a constant of those values (in the input's
declared shape and dtype): for axes, sizes, scales or shapes the model feeds as inputs,
which a static program needs at compile time (the error for such a model names them).

On a terminal a bar shows the phases (converting, printing, writing the weights) of an
import that takes a while; `--quiet` hides it.

A missing or corrupt file, or a model relaylang cannot convert (every op without a
converter is named with its node and opset), is one line `MODEL: error: ...` and exit
status 1.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, EXIT_USAGE, add_quiet_flag, error, write


def _parse_shape(spec: str) -> tuple[str, tuple[int | None, ...]]:
    """`NAME=1,3,224,224` as (NAME, dims); `?` or a negative dim is unknown (None)."""
    name, eq, dims_text = spec.rpartition("=")
    if not eq or not name:
        raise ValueError(f"--shape {spec!r}: expected NAME=D1,D2,... (e.g. data=1,3,224,224)")
    dims: list[int | None] = []
    text = dims_text.strip().strip("()[]")
    for part in text.split(",") if text else []:
        part = part.strip()
        if part == "?":
            dims.append(None)
            continue
        try:
            d = int(part)
        except ValueError:
            raise ValueError(f"--shape {spec!r}: {part!r} is not a dimension (an integer, "
                             "or ? for an unknown one)") from None
        dims.append(None if d < 0 else d)
    return name, tuple(dims)


def _parse_bind(spec: str) -> tuple[str, Any]:
    """`NAME=1,2` as (NAME, a 1-D array of those numbers: int64 unless one has a point or
    an exponent); the importer puts it in the input's declared shape and dtype."""
    import numpy as np
    name, eq, values_text = spec.partition("=")
    if not eq or not name:
        raise ValueError(f"--bind {spec!r}: expected NAME=V1,V2,... (e.g. axes=1,2)")
    parts = [p.strip() for p in values_text.strip().strip("()[]").split(",") if p.strip()]
    try:
        if any(c in p for p in parts for c in ".eEn"):
            return name, np.array([float(p) for p in parts], np.float64)
        return name, np.array([int(p) for p in parts], np.int64)
    except ValueError:
        raise ValueError(f"--bind {spec!r}: the values must be numbers separated by "
                         "commas") from None


def _one_line(message: str, path: str) -> str:
    message = " ".join(message.split())
    prefix = f"{path}: "
    message = message.removeprefix(prefix)
    if message.startswith("shape= names"):          # the library's keyword, as an option
        message = "--shape names" + message[len("shape= names"):]
    for keyword, option in (("bind= names", "--bind names"), ("bind= gives", "--bind gives")):
        if message.startswith(keyword):
            message = option + message[len(keyword):]
    return message


def cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path
    shapes: dict[str, tuple[int | None, ...]] = {}
    for spec in args.shape:
        try:
            name, dims = _parse_shape(spec)
        except ValueError as e:
            error("relay import", str(e))
            return EXIT_USAGE
        if name in shapes:
            error("relay import", f"--shape {name}: given twice")
            return EXIT_USAGE
        shapes[name] = dims
    binds: dict[str, Any] = {}
    for spec in args.bind:
        try:
            name, value = _parse_bind(spec)
        except ValueError as e:
            error("relay import", str(e))
            return EXIT_USAGE
        if name in binds:
            error("relay import", f"--bind {name}: given twice")
            return EXIT_USAGE
        binds[name] = value
    if args.opset is not None and args.opset < 1:
        error("relay import", f"--opset {args.opset}: an opset is a positive integer")
        return EXIT_USAGE
    path = args.model
    if not Path(path).exists():
        error(path, "cannot read file: No such file or directory")
        return EXIT_DIAGNOSTICS
    if Path(path).is_dir():
        error(path, "cannot read file: Is a directory")
        return EXIT_DIAGNOSTICS
    try:
        import onnx  # noqa: F401
    except ImportError:
        error(path, "importing ONNX models needs the `onnx` package: "
                    "pip install 'relaylang[onnx]'")
        return EXIT_DIAGNOSTICS
    from ..ir.progress import begin
    with begin(f"import {Path(path).name}", total=3, unit="step") as task:
        task.update(0, note="converting")
        from ..frontend.onnx import OnnxImportError, from_onnx
        try:
            mod, params = from_onnx(path, shape=shapes or None, opset=args.opset,
                                    freeze_params=args.inline_params, bind=binds or None)
        except OnnxImportError as e:
            task.close()         # the bar gone before the error line
            error(path, _one_line(str(e), path))
            return EXIT_DIAGNOSTICS
        task.update(1, note="printing")
        text = program_text(mod)
        task.update(1, note="writing weights")
        saved = args.params_out is None or _save_params(args.params_out, params)
        task.update(1)
    if not saved:
        return EXIT_DIAGNOSTICS
    if args.params_out is None and params and not args.inline_params:
        print(f"{path}: note: {len(params)} weight(s) are parameters of @main and were not "
              "written: give --params-out P.npz to save them, or --inline-params to make "
              "them constants", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    return EXIT_OK if write(args.output, text) else EXIT_DIAGNOSTICS


def program_text(mod: Any) -> str:
    """The text of `mod` as `relay fmt` lays it out: the printer's, without TVM's
    `/* ty=... */` notes (the checked types; a parsed program has none, and fmt would keep
    them as comments on lines of their own), ending in a newline; constants too large for
    a literal go to the `#[metadata]` section."""
    from ..syntax.metadata import encode_metadata
    from ..syntax.printer import VERSION_LINE, TextPrinter

    class UntypedPrinter(TextPrinter):
        def type_note(self, node: Any) -> str:
            return ""

    printer = UntypedPrinter()
    text = VERSION_LINE + "\n" + printer.module_text(mod)
    if printer.meta:
        text += "\n#[metadata]\n" + encode_metadata(printer.meta)
    return text if text.endswith("\n") else text + "\n"


def _save_params(path: str, params: dict[str, Any]) -> bool:
    """The weights as an `.npz` archive keyed by @main's parameter names (what
    `relaylang.backend.params.load_params` reads); False after saying why not."""
    import numpy as np
    try:
        with open(path, "wb") as f:
            np.savez(f, **{name: np.asarray(value) for name, value in params.items()})
    except OSError as e:
        error(path, f"cannot write file: {e.strerror or e}")
        return False
    return True


def add_import_parser(sub: Any) -> None:
    p = sub.add_parser("import", help="convert an ONNX model to a Relay program",
                       description="Convert an ONNX model to Relay text (rl.frontend."
                       "from_onnx). The weights are @main parameters written with "
                       "--params-out, or constants with --inline-params.")
    p.add_argument("model", metavar="MODEL.onnx", help="an ONNX model file")
    p.add_argument("-o", "--output", metavar="OUT.relay",
                   help="write the program here (default: standard output)")
    weights = p.add_mutually_exclusive_group()
    weights.add_argument("--params-out", metavar="P.npz",
                         help="write the weights to a NumPy archive keyed by @main's "
                              "parameter names (for relay run/build --params)")
    weights.add_argument("--inline-params", action="store_true",
                         help="make the weights constants of the program (a #[metadata] "
                              "section) instead of parameters")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D1,D2,...",
                   help="fix the shape of input NAME (? or -1 for an unknown dim); "
                        "repeatable")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="make graph input NAME a constant of these values (axes, sizes, "
                        "scales or shapes fed as inputs); repeatable")
    p.add_argument("--opset", type=int, metavar="N",
                   help="convert as ONNX opset N (default: the model's)")
    add_quiet_flag(p)
    p.set_defaults(run=cmd_import)
