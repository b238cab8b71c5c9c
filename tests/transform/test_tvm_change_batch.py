"""ChangeBatch against TVM v0.19's tests/python/relay/test_change_batch.py, run through the
golden harness (re-parse, idempotence; the value check is off: the inputs change shape)."""
from __future__ import annotations

from tvm_golden import run_golden

from relaylang.testing import models


# TVM's test_change_batch_synthetic (relay.testing.synthetic there; the LeNet-style CNN of
# relaylang.testing.models here): the first parameter's axis 0 becomes 123, and so does
# the result's.
def test_change_batch_synthetic() -> None:
    mod, _ = models.get_workload("mnist")
    first = mod["main"].params[0].name_hint
    after = run_golden(mod, f"ChangeBatch{{data={first}:0,batch_size=123}}", skip=("interp",))
    assert after["main"].checked_type.ret_type.shape[0] == 123
