"""DeadCodeElimination against TVM v0.19's tests/python/relay/test_pass_dead_code_elimination.py:
the tests written as Relay text are golden cases in tests/golden/tvm/dead_code_elimination/;
the one built from a model is here, run through the golden harness's automatic checks."""
from __future__ import annotations

from tvm_golden import assert_same, run_golden

from relaylang.testing import models


# TVM's test_complexity (inception_v3 there; a ResNet here): a large dataflow graph has
# nothing dead and nothing to inline, and comes back unchanged.
def test_complexity() -> None:
    mod, _ = models.get_workload("resnet18", image_shape=(3, 32, 32))
    after = run_golden(mod, "DeadCodeElimination{inline_once=true}", skip=("interp",))
    assert_same(after, mod)
