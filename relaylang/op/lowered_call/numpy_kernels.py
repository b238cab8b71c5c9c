"""The reference kernel of `call_lowered`: an error at evaluation (see the family)."""
from __future__ import annotations

from ..memory.numpy_kernels import only_after_lowering
from ..registry import implement

implement("call_lowered")(
    only_after_lowering("call_lowered", "calls a lowered function", __name__))
