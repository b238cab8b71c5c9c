"""What the op-family tests share: calling an op's type relation and kernel by name."""
from __future__ import annotations

from typing import Any

import pytest

from relaylang.ir.attrs import make_attrs
from relaylang.ir.types import TensorType
from relaylang.op import get_op_def
from relaylang.op.relation import TypeRelError


def T(shape: Any, dtype: str = "float32") -> TensorType:
    return TensorType(tuple(shape), dtype)


def attrs_of(op: str, kw: dict[str, Any]) -> Any:
    d = get_op_def(op)
    return make_attrs(d.attrs, kw) if d.attrs else None


def rel(op: str, *types: Any, **kw: Any) -> Any:
    return get_op_def(op).type_rel(list(types), attrs_of(op, kw))


def run(op: str, *inputs: Any, **kw: Any) -> Any:
    return get_op_def(op).kernel(list(inputs), attrs_of(op, kw))


def shape(op: str, *types: Any, **kw: Any) -> Any:
    return rel(op, *types, **kw).shape


def rel_error(op: str, types: Any, fragment: str, arg: int | None = None,
              **kw: Any) -> TypeRelError:
    with pytest.raises(TypeRelError) as info:
        rel(op, *types, **kw)
    assert fragment in info.value.message, info.value.message
    assert info.value.arg == arg, (info.value.arg, info.value.message)
    return info.value
