"""The op registry: every primitive operator, once, with everything about it.

This module is a leaf: it imports nothing of relaylang but `relaylang.ir`, no op
family and no NumPy. The families fill it.

A *family* is a subpackage of `relaylang/op/` (`op/nn/`, `op/tensor/`, ...). Its
`__init__` declares each of its ops once, with keywords (`declare_op`); its
implementations register per target beside it with `@implement`, in modules named
by `TARGET_MODULES` (`numpy_kernels.py` for the reference kernels; `llvm` lowerings
and `gradient`s later, the same way). Families are found, not listed: the first
lookup imports every subpackage of `relaylang.op`, so a new family folder needs no
edit elsewhere. An implementation module is imported only when an implementation of
that family for that target is first asked for (`OpDef.kernel` is a thin wrapper that
does so on its first call), so loading the registry imports no NumPy.

    # op/nn/__init__.py
    declare_op("nn.conv2d", inputs=("data", "weight"), attrs=Conv2DAttrs,
               rel=conv_rel(2), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
               layout="conv", scale_axis="conv")

    # op/nn/numpy_kernels.py
    @implement("nn.conv2d")                       # target="numpy" is the default
    def conv2d(inputs, attrs): ...

Besides what the parser, type checker and interpreter need (schema, relation,
kernel, fusion pattern), an op carries what passes need to know about it, so that
no pass keeps a list of op names (see `OpDef`).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr, Op


class OpPattern(IntEnum):
    """TVM's fusion pattern kinds (python/tvm/relay/op/op.py)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


@dataclass(frozen=True, slots=True)
class OpDef:
    """One operator.

    `layout` is how the op behaves when the layout of its inputs changes
    (ConvertLayout/AlterOpLayout, transform/layout/rules.py, map the kind to a rule):
    "conv" (takes the preferred data/kernel layouts), "pool" (takes the preferred
    layout, else follows), "elemwise" (follows its one tensor input), "broadcast"
    (follows its full-rank operand), "axis" (follows, `axis` renumbered), "reduce",
    "arg_reduce", "concatenate", "pad", "transpose", "layout_transform", "spatial"
    (a `layout` attribute: as "pool"), "roi" (its `layout` only when asked), "axes",
    "squeeze", "split", "topk", "strided_slice", "slice_like"; None: an edge, whose
    inputs get their original layouts back.

    `scale_axis` is the op's role in FoldScaleAxis (transform/fold_scale_axis/):
    "conv" and "dense" (consumers whose weight absorbs a per-channel scale),
    "relu" (commutes with a positive scale), "add_sub" (passes a scale on when the
    other operand broadcasts along the scaled axes), "bias_add", "multiply" (the
    scale itself), "shape" (only moves values: a positive constant seen through it
    stays positive); None: a scale stops here.

    `fast_math` names the fast approximate op FastMath replaces this one by (same
    inputs and attributes). `non_computational`: neither computation nor a value of
    its own (a placement or transfer): FoldConstant leaves its calls in place.
    `package` is the family package whose target modules hold its implementations:
    `kernel` calls the "numpy" one; an LLVM lowering or a gradient is
    `implementation("llvm")`, `implementation("gradient")`.
    """

    name: str
    num_inputs: int                       # -1: variadic
    attrs: type[Attrs] | None = None      # None: the op takes no attributes
    type_rel: Callable[..., Any] | None = None
    kernel: Callable[..., Any] | None = None
    pattern: OpPattern = OpPattern.OPAQUE
    stateful: bool = False
    doc: str = ""
    # TVM's `.add_argument` names, one per input (test_op_signature checks the count):
    # signatures and diagnostics say `weight`, not "argument 1".
    input_names: tuple[str, ...] = ()
    layout: str | None = None
    scale_axis: str | None = None
    fast_math: str | None = None
    non_computational: bool = False
    package: str = ""

    def implementation(self, target: str) -> Callable[..., Any] | None:
        """This op's implementation for `target` ("numpy", "llvm", "gradient"), or None."""
        return implementation(self.name, target)


_OPS: dict[str, OpDef] = {}
_OP_NODES: dict[str, Op] = {}


def register_op(opdef: OpDef) -> OpDef:
    if opdef.name in _OPS:
        raise ValueError(f"op {opdef.name} registered twice")
    _OPS[opdef.name] = opdef
    _OP_NODES[opdef.name] = Op(opdef.name)
    return opdef


def unregister_op(name: str) -> None:
    """Forget the op `name` (an op registered at run time: `rl.register_extern_op`)."""
    _OPS.pop(name, None)
    _OP_NODES.pop(name, None)


def declare_op(name: str, *, inputs: tuple[str, ...] = (), attrs: type[Attrs] | None = None,
               rel: Callable[..., Any] | None = None,
               pattern: OpPattern = OpPattern.OPAQUE, layout: str | None = None,
               scale_axis: str | None = None, fast_math: str | None = None,
               non_computational: bool = False, stateful: bool = False, doc: str = "",
               kernel: Callable[..., Any] | None = None,
               package: str | None = None, variadic: bool = False) -> OpDef:
    """Declare and register the op `name`, once, with everything about it (see `OpDef`).

    `inputs` are TVM's `.add_argument` names (their count is the arity); `variadic`: any
    number of inputs, unnamed (`call_dps_packed(%x, %w, %b, func=...)`). The kernel is
    the numpy implementation registered with `@implement(name)` in the family's
    `numpy_kernels` module, imported on the kernel's first call; pass `kernel=` to give
    one directly. `package` defaults to the package of the calling module (the family).
    """
    if package is None:
        caller = sys._getframe(1).f_globals
        package = caller.get("__package__") or caller.get("__name__", "")
    return register_op(OpDef(
        name, -1 if variadic else len(inputs), attrs=attrs, type_rel=rel,
        kernel=kernel if kernel is not None else _numpy_kernel(name), pattern=pattern,
        stateful=stateful, doc=doc, input_names=tuple(inputs), layout=layout,
        scale_axis=scale_axis, fast_math=fast_math, non_computational=non_computational,
        package=package))


def get_op_def(name: str) -> OpDef | None:
    _load_families()
    return _OPS.get(name)


def get(name: str) -> Op:
    """The shared `Op` expression node for a registered op (KeyError if unknown)."""
    _load_families()
    return _OP_NODES[name]


def all_ops() -> list[OpDef]:
    _load_families()
    return list(_OPS.values())


def call(name: str, *args: Expr, attrs: Attrs | None = None, span: Any = None) -> Call:
    """A call of the registered op `name` on `args` (KeyError if there is no such op)."""
    return Call(get(name), args, attrs, span=span)


# ------------------------------------------------------------- implementations

# target -> the module of a family that holds the implementations for it.
TARGET_MODULES: dict[str, str] = {
    "numpy": "numpy_kernels",      # reference kernels: kernel(inputs, attrs) -> value
    "llvm": "llvm_lowering",       # loop-IR lowerings
    "gradient": "gradients",       # gradient definitions
}

class NoImplementation(LookupError):
    """An op was run on a target it has no implementation for."""


_IMPLS: dict[tuple[str, str], Callable[..., Any]] = {}
_TRIED: set[tuple[str, str]] = set()     # (package, target) modules imported or missing


def implement(*names: str, target: str = "numpy",
              float16: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None
              ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the function implements each op of `names` for `target`.

        @implement("nn.relu")
        def relu(inputs, attrs): ...

    A function built by a factory registers the same way: `implement("exp")(unary(np.exp))`.

    `float16` (numpy kernels): how the kernel computes float16 inputs, as an adapter the
    registered implementation is wrapped in; `numpy_support.float16_in_float32` computes
    them in float32 and rounds the results back (its docstring says for which ops that is
    exact). The decorator returns the function itself, unwrapped.
    """
    if target not in TARGET_MODULES:
        raise ValueError(f"unknown target {target!r}; known: {', '.join(TARGET_MODULES)}")
    if float16 is not None and target != "numpy":
        raise ValueError("float16= adapts numpy kernels only")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        impl = fn if float16 is None else float16(fn)
        for name in names:
            if name not in _OPS:
                raise ValueError(f"@implement({name!r}): no op {name} is declared")
            known = _IMPLS.get((name, target), impl)
            if known is not impl and getattr(known, "__wrapped__", None) is not fn:
                raise ValueError(f"op {name} has two {target} implementations")
            _IMPLS[(name, target)] = impl
        return fn
    return register


def implementation(name: str, target: str) -> Callable[..., Any] | None:
    """The implementation of op `name` for `target`, importing the family's module for
    that target on first need; None if there is none."""
    fn = _IMPLS.get((name, target))
    if fn is None:
        opdef = get_op_def(name)
        module = TARGET_MODULES.get(target)
        if opdef is None or module is None or not opdef.package:
            return None
        key = (opdef.package, target)
        if key not in _TRIED:
            _TRIED.add(key)
            full = f"{opdef.package}.{module}"
            try:
                spec = importlib.util.find_spec(full)
            except ModuleNotFoundError:     # declared by a plain module, not a package
                spec = None
            if spec is not None:
                importlib.import_module(full)
        fn = _IMPLS.get((name, target))
    return fn


def _numpy_kernel(name: str) -> Callable[[list, Any], Any]:
    """`OpDef.kernel`: calls the op's numpy implementation, looked up on the first call
    (which imports the family's `numpy_kernels` module, and NumPy)."""
    impl: Callable[[list, Any], Any] | None = None

    def kernel(inputs: list, attrs: Any) -> Any:
        nonlocal impl
        if impl is None:
            impl = implementation(name, "numpy")
            if impl is None:
                raise NoImplementation(f"op {name} has no numpy kernel")
        return impl(inputs, attrs)
    kernel.__name__ = kernel.__qualname__ = f"numpy_kernel[{name}]"
    return kernel


# ------------------------------------------------------------------ families

_loaded = False
_FAMILIES: list[str] = []


def families() -> list[str]:
    """The family packages, as module names (`relaylang.op.nn`, ...)."""
    _load_families()
    return list(_FAMILIES)


def _load_families() -> None:
    # Each subpackage of relaylang.op is a family that declares its ops on import;
    # importing them here, once, on first use, keeps `import relaylang` cheap.
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = __name__.rpartition(".")[0]
    parent = sys.modules.get(package)
    path = list(getattr(parent, "__path__", None) or [os.path.dirname(__file__)])
    for info in pkgutil.iter_modules(path):
        if info.ispkg and not info.name.startswith("_"):
            name = f"{package}.{info.name}"
            importlib.import_module(name)
            _FAMILIES.append(name)


_SCHEMAS: dict[str, type[Attrs]] = {}


def attrs_schemas() -> dict[str, type[Attrs]]:
    """TVM attrs type key (e.g. "relay.attrs.Conv2DAttrs") -> schema, for every schema a
    family module defines, including schemas that no op registers as its own
    (CompilerAttrs, CastHintAttrs): the parser needs them for `attrs_type_key="..."` and
    `meta[relay.attrs.*][i]` attribute objects."""
    if not _SCHEMAS:
        for family in families():
            for module_name, module in list(sys.modules.items()):
                if module is None or not (module_name == family
                                          or module_name.startswith(family + ".")):
                    continue
                for value in vars(module).values():
                    if (isinstance(value, type) and issubclass(value, Attrs)
                            and value.__module__ == module_name):
                        _SCHEMAS[value.type_key] = value
    return dict(_SCHEMAS)
