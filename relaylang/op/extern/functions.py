"""Global functions by name: TVM's `tvm.register_func` / `tvm.get_global_func`.

    @rl.register_func("env.linear")
    def linear(x, w, b, out):            # destination-passing style: write `out`
        np.matmul(x, w.T, out=out)
        out += b

    rl.get_global_func("env.linear")     # the callable; KeyError naming close names if absent

Relay calls a registered function with `call_dps_packed(%x, %w, %b, func="env.linear",
out_shape=[1, 128], out_dtype="float32")` (this family's op) or through an op of its own
(`register_extern_op`). A name is registered once unless `override=True`; names are
dotted like TVM's ("env.linear", "blas.dense").
"""
from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from typing import Any

_FUNCS: dict[str, Callable[..., Any]] = {}
_LOCK = threading.Lock()


def register_func(name: str | Callable[..., Any], f: Callable[..., Any] | None = None,
                  override: bool = False) -> Any:
    """Register `f` under `name`; as a decorator, `@register_func("env.x")` (or bare
    `@register_func`: the function's own name). Returns `f`."""
    if callable(name) and f is None:        # @register_func without a name
        fn = name
        return register_func(fn.__name__, fn, override)
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_func: the name must be a non-empty string, not {name!r}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError(f"register_func({name!r}): {fn!r} is not callable")
        with _LOCK:
            if name in _FUNCS and not override:
                raise ValueError(f"a global function {name} is already registered "
                                 "(override=True replaces it)")
            _FUNCS[name] = fn
        return fn
    return register(f) if f is not None else register


class GlobalFuncMissing(KeyError):
    """No function is registered under the name: a KeyError (a lookup by name failed)
    whose message prints as written (KeyError's own str() quotes it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def get_global_func(name: str, allow_missing: bool = False) -> Callable[..., Any] | None:
    """The function registered as `name` (None when missing and `allow_missing`)."""
    fn = _FUNCS.get(name)
    if fn is None and not allow_missing:
        close = difflib.get_close_matches(name, list(_FUNCS), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else \
            " (register it with rl.register_func)"
        raise GlobalFuncMissing(f"no global function {name} is registered{hint}")
    return fn


def list_global_func_names() -> list[str]:
    return sorted(_FUNCS)


def remove_global_func(name: str) -> None:
    """Forget `name` (a test's cleanup; a missing name is not an error)."""
    with _LOCK:
        _FUNCS.pop(name, None)
