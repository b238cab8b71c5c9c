"""Programs the viz tests draw (imported by bare name from tests/viz)."""
from __future__ import annotations

HEADER = '#[version = "0.0.5"]\n'

BRANCHY = HEADER + """\
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32], %c: bool) {
  %0 = nn.dense(%x, %w, units=4);
  %1 = nn.relu(%0);
  %2 = if (%c) {
    %3 = exp(%1);
    add(%3, 1f)
  } else {
    negative(%1)
  };
  %4 = sigmoid(%0);
  (%2, %4)
}
"""

MATCHY = HEADER + """\
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @sum(%xs: List[float32]) -> float32 {
  match (%xs) {
    Cons(%h, %t) => {
      %0 = @sum(%t);
      add(%h, %0)
    },
    Nil => {
      0f
    },
  }
}

def @main(%x: float32) -> float32 {
  @sum(Cons(%x, Cons(2f, Nil)))
}
"""

FUSABLE = HEADER + """\
def @main(%data: Tensor[(1, 3, 8, 8), float32], %weight: Tensor[(4, 3, 3, 3), float32],
          %bias: Tensor[(4), float32]) {
  %0 = nn.conv2d(%data, %weight, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %bias);
  %2 = nn.relu(%1);
  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);
  %4 = nn.batch_flatten(%3);
  nn.softmax(%4)
}
"""


def big_model(blocks: int) -> str:
    """@main: a chain of `blocks` blocks of five ops each (dense, relu, then sigmoid of the
    block's input beside them, add, multiply by a constant): 5 * blocks op calls."""
    lines = [HEADER.rstrip("\n"),
             "def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(8, 8), float32]) {"]
    prev, k = "%x", 0
    for _ in range(blocks):
        a, b, c, d, e = (f"%{k + i}" for i in range(5))
        k += 5
        lines += [f"  {a} = nn.dense({prev}, %w, units=8);", f"  {b} = nn.relu({a});",
                  f"  {c} = sigmoid({prev});", f"  {d} = add({b}, {c});",
                  f"  {e} = multiply({d}, 0.5f);"]
        prev = e
    lines += [f"  {prev}", "}"]
    return "\n".join(lines) + "\n"


def op_calls(mod, name: str = "main") -> list[str]:
    """The op name of every op call in @name (inside fused functions too), by a walk."""
    from relaylang.ir.expr import Call, Op
    from relaylang.ir.traverse import post_order
    fn = mod.functions[mod.get_global_var(name)]
    return [e.op.name for e in post_order(fn) if isinstance(e, Call) and isinstance(e.op, Op)]
