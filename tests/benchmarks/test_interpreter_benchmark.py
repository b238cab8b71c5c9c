"""benchmarks/interpreter.py end to end at tiny sizes, and the properties of the interpreter's
machine that it measures: tail calls in constant stack space, non-tail recursion a million
deep, values dying at their last use, shared nodes computed once, floating-point errors
ignored once per run."""
from __future__ import annotations

import json
import warnings
from typing import ClassVar

import numpy as np
import pytest
from bench_helpers import load_benchmark

import relaylang as rl
from relaylang.backend.interpreter.machine import Activation, Interpreter, InterpreterError
from relaylang.backend.interpreter.values import ConstructorValue
from relaylang.ir.expr import Call, Constant, Let, Var
from relaylang.op import implementation
from relaylang.op.numpy_support import fp_errors_ignored
from relaylang.op.registry import get as get_op
from relaylang.typing import infer_types

V = '#[version = "0.0.5"]\n'


bench = load_benchmark("interpreter")
TINY = ["--chain", "50", "--loop", "200", "--list", "300", "--mlp-calls", "3", "--image", "32",
        "--units", "1,1,1,1", "--repeat", "2", "--repeat-large", "1", "--gpt2-layers", "1",
        "--gpt2-seq", "16"]


class DepthList(list):
    """A stack that remembers the deepest it has been."""

    def __init__(self) -> None:
        super().__init__()
        self.deepest = 0
        DepthList.made.append(self)

    def append(self, item) -> None:
        super().append(item)
        self.deepest = max(self.deepest, len(self))

    made: ClassVar[list[DepthList]] = []


class TaskDepthInterpreter(Interpreter):
    _task_stack = DepthList


class DepthInterpreter(Interpreter):
    _task_stack = DepthList
    _value_stack = DepthList


def run(text: str, *args, entry: str = "main", cls: type[Interpreter] = Interpreter):
    interp = cls(infer_types(rl.parse(V + text)))
    return interp.apply(interp.global_closure(entry), list(args))


def i64(v: int) -> np.ndarray:
    return np.asarray(v, dtype=np.int64)


# --- the benchmark -------------------------------------------------------------------------------

def test_benchmark_json_end_to_end(capsys):
    assert bench.main(TINY + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["case"]: r for r in report["results"]}
    assert list(rows) == ["chain of tiny elementwise ops", "tail-recursive loop",
                          "list build (@range, non-tail)", "list fold (@foldl, closure)",
                          "MLP 784-128-10, batch 1", "ResNet units (1, 1, 1, 1) 1x3x32x32",
                          "ResNet units (1, 1, 1, 1) 1x3x32x32 fp16",
                          "GPT-2 1x768 seq 16 fp16"]
    # every result was checked against its expected value (the models against NumPy, fp16
    # against fp32)
    assert all(r["crash"] is None and r["error"] is None for r in rows.values()), rows
    assert [len(r["runs_ms"]) for r in rows.values()] == [2, 1, 1, 1, 2, 2, 2, 1]
    for case in ("ResNet units (1, 1, 1, 1) 1x3x32x32 fp16", "GPT-2 1x768 seq 16 fp16"):
        fp16 = rows[case]       # its baseline is the same model in float32, interleaved
        assert fp16["baseline"] == "fp32 interp" and len(fp16["numpy_ms"]) == len(
            fp16["runs_ms"])
        assert fp16["ratio"] == pytest.approx(fp16["median_ms"] / fp16["numpy_median_ms"])
    assert rows["tail-recursive loop"]["size"] == 201
    chain = rows["chain of tiny elementwise ops"]
    assert len(chain["numpy_ms"]) == 2 and chain["overhead_us"] == pytest.approx(
        (chain["median_ms"] - chain["numpy_median_ms"]) * 1000 / 50)
    assert [t["target"] for t in report["targets"]] == [
        "overhead us/op, chain 50", "MLP batch 1, interp/numpy",
        "ResNet units (1, 1, 1, 1) 1x3x32x32, interp/numpy",
        "ResNet units (1, 1, 1, 1) 1x3x32x32, fp16/fp32", "GPT-2 1x768 seq 16, fp16/fp32"]
    assert report["command"].startswith("python benchmarks/interpreter.py --chain 50")


def test_benchmark_table(capsys):
    assert bench.main(TINY) == 0
    out = capsys.readouterr().out
    assert "us/op raw" in out and "us/op overhead" in out
    for target in ("overhead us/op, chain 50", "MLP batch 1, interp/numpy",
                   "GPT-2 1x768 seq 16, fp16/fp32"):
        line = next(line for line in out.splitlines() if line.startswith(target))
        assert line.endswith(("PASS", "FAIL"))


def test_wrong_result_or_crash_fails_the_target():
    good = bench.Result("MLP 784-128-10, batch 1", 3, "call", [3.0, 3.0], [2.0, 2.0])
    wrong = bench.Result("MLP 784-128-10, batch 1", 3, "call", [3.0], [2.0],
                         error="differs from NumPy")
    slow = bench.Result("ResNet-50 1x3x224x224", 1, "run", [12.0], [10.0])
    crashed = bench.Result("chain of tiny elementwise ops", 10, "op", crash="RecursionError: x")
    rows = bench.check_targets([good, wrong, slow, crashed])
    assert [r["pass"] for r in rows] == [True, False, False, False]
    assert rows[0]["got"] == pytest.approx(1.5) and rows[2]["got"] == pytest.approx(1.2)
    assert rows[1]["note"] == "differs from NumPy" and "RecursionError" in rows[3]["note"]


def test_fp16_checks_compare_with_fp32_within_five_percent_of_its_largest_value():
    check = bench._relative_to_largest(0.05)
    want = np.array([[4.0, -2.0]], dtype=np.float32)
    assert check(want.astype(np.float16), want) is None
    assert check((want,), (want,)) is not None                      # not float16
    assert "differs" in check(np.array([[4.0, -1.7]], dtype=np.float16), want)
    assert "differs" in check(np.array([[np.inf, -2]], dtype=np.float16), want)
    slow = bench.Result("GPT-2 1x768 seq 16 fp16", 1, "run", [30.0], [10.0],
                        baseline="fp32 interp")
    row, = bench.check_targets([slow])
    assert row["target"] == "GPT-2 1x768 seq 16, fp16/fp32" and row["got"] == 3.0
    assert not row["pass"]


def test_gpt2_args_fit_the_generated_model():
    text = bench.gen_models.gpt2_module_text(layers=1, seq=5, dtype="float16")
    mod = infer_types(rl.parse(text))
    args = bench.gpt2_args(mod)
    by_name = {p.name_hint: a for p, a in zip(mod["main"].params, args, strict=True)}
    assert by_name["position_ids"].tolist() == [[0, 1, 2, 3, 4]]
    assert by_name["h_0_attn_bias"].shape == (1, 1, 1024, 1024)
    assert by_name["h_0_attn_bias"][0, 0, 1, 2] == 0 and by_name["h_0_attn_bias"][0, 0, 2, 1]
    assert by_name["h_0_ln_1_weight"].tolist() == [1.0] * 768
    assert by_name["h_0_attn_c_attn_bias"].std() > 0.01       # not a layer norm's bias
    interp = Interpreter(mod)
    out = interp.apply(interp.global_closure("main"), bench._half(args))
    assert out[0].dtype == np.float16 and out[0].shape == (1, 5, 50257)
    assert np.isfinite(out[0]).all()


@pytest.mark.parametrize("seq,dtype", [(1600, "float32"), (1600, "float16"), (7, "float16")])
def test_gpt2_generator_sizes_and_dtypes_type_check(seq, dtype):
    gm = bench.gen_models
    text = gm.gpt2_module_text(layers=1, seq=seq, dtype=dtype)
    mod = infer_types(rl.parse(text))
    logits = mod["main"].checked_type.ret_type.fields[0]
    assert tuple(int(d) for d in logits.shape) == (1, seq, gm.VOCAB) and logits.dtype == dtype
    if dtype == "float16":
        assert "float32" not in text and "8f16 /* ty=float16 */" in text
    wpe = next(p for p in mod["main"].params if p.name_hint == "wpe")
    assert int(wpe.type_annotation.shape[0]) == max(seq, gm.N_CTX)


def test_crash_gives_exit_status_1(monkeypatch, capsys):
    def broken(n, repeat):
        return bench.measure(bench.Result("tail-recursive loop", n, "iteration"),
                             lambda: 1 / 0, None, repeat, lambda got, want: None)
    monkeypatch.setattr(bench, "bench_loop", broken)
    assert bench.main(TINY) == 1
    assert "error: tail-recursive loop: ZeroDivisionError" in capsys.readouterr().out


def test_chain_text_is_a_graph_chain():
    text = bench.chain_text(7)
    assert text.count(";\n") == 6 and text.endswith("  add(%5, 1f)\n}\n")
    interp = Interpreter(rl.parse(text))
    x = np.ones((1, 64), dtype=np.float32)
    out = interp.apply(interp.global_closure("main"), [x])
    want = x
    for i in range(7):
        want = [want + 1, want * 0.5, want - 0.25][i % 3]
    np.testing.assert_allclose(out, want)


def test_direct_resnet_matches_interpreter_with_projection_units():
    text, metadata = bench.gen_resnet.resnet50_module(batch=2, units=(2, 1, 1, 1), image=32)
    weights = bench.random_weights(metadata["relay.Constant"])
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32), dtype=np.float32)
    interp = Interpreter(rl.parse(text, metadata={"relay.Constant": weights}))
    got = interp.apply(interp.global_closure("main"), [x])
    want = bench.resnet_numpy(x, weights, (2, 1, 1, 1))
    assert got.shape == (2, 1000)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)
    assert 0.0005 < want.max() < 0.5          # the random weights keep the output spread


# --- tail calls and deep recursion ---------------------------------------------------------------

def test_tail_recursive_loop_runs_in_constant_task_stack():
    DepthList.made.clear()
    n = 1_000_000
    assert int(run(bench.LOOP[len(V):], i64(n), cls=TaskDepthInterpreter)) == n * (n + 1) // 2
    tasks, = DepthList.made
    assert tasks.deepest == 0             # every call and `if` of the loop is a tail call


def test_loop_value_and_task_stacks_stay_small():
    DepthList.made.clear()
    assert int(run(bench.LOOP[len(V):], i64(10_000), cls=DepthInterpreter)) == 50_005_000
    values, tasks = DepthList.made
    assert values.deepest <= 4 and tasks.deepest == 0


def test_non_tail_recursion_depth_is_on_the_task_stack():
    DepthList.made.clear()
    text = """def @f(%n: int64) -> int64 {
      if (%n == 0i64) { 0i64 } else { add(@f(%n - 1i64), 1i64) }
    }"""
    assert int(run(text, i64(5000), entry="f", cls=DepthInterpreter)) == 5000
    values, tasks = DepthList.made
    assert tasks.deepest == 5000 and values.deepest <= 4


def test_non_tail_recursion_a_million_deep():
    xs = run(bench.LIST[len(V):], i64(0), i64(1_000_000), entry="range")
    count, last = 0, None
    while xs.fields:
        count, last, xs = count + 1, xs.fields[0], xs.fields[1]
    assert count == 1_000_000 and int(last) == 999_999


def test_list_fold_with_closure():
    interp = Interpreter(infer_types(rl.parse(bench.LIST)))
    xs = interp.apply(interp.global_closure("range"), [i64(3), i64(300)])
    assert isinstance(xs, ConstructorValue) and xs.name == "Cons"
    assert int(interp.apply(interp.global_closure("sum"), [xs])) == sum(range(3, 300))


# --- sharing and values' lifetimes -------------------------------------------------------------

def test_values_die_at_their_last_use():
    """A graph-form body keeps no intermediate in its activation once its last user ran."""
    seen: list[int] = []

    class Spy(Interpreter):
        def _run(self, code, env):
            out = super()._run(code, env)
            seen.append(len(env.values))
            return out
    text = """def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
      %0 = add(%x, 1f);
      %1 = multiply(%0, %0);
      %2 = subtract(%1, %0);
      add(%2, %1)
    }"""
    x = np.arange(4, dtype=np.float32)
    out = run(text, x, cls=Spy)
    np.testing.assert_allclose(out, ((x + 1) ** 2 - (x + 1)) + (x + 1) ** 2)
    assert seen == [0]                    # %x, %0 and %1 all dropped after their last use


def test_shared_node_in_both_branches_and_a_closure():
    text = """def @main(%c: bool, %x: int64) -> (int64, int64) {
      %0 = add(%x, 1i64);
      let %f = fn (%y: int64) -> int64 { multiply(%y, %0) };
      %1 = if (%c) { %f(%0) } else { subtract(%0, 3i64) };
      (%1, %0)
    }"""
    assert [int(v) for v in run(text, np.asarray(True), i64(4))] == [25, 5]
    assert [int(v) for v in run(text, np.asarray(False), i64(4))] == [2, 5]


def test_a_node_shared_by_two_closures_is_computed_where_both_are_made():
    # ToANormalForm's placement: %0's users are the bodies of %inc and %get, so it is bound
    # in @main, before the first closure that needs it, and both see one cell.
    text = """def @main() -> int64 {
      %0 = ref(0i64);
      let %inc = fn () -> () { ref_write(%0, add(ref_read(%0), 1i64)) };
      let %get = fn () -> int64 { ref_read(%0) };
      %inc();
      %inc();
      %get()
    }"""
    assert int(run(text)) == 2


def test_a_node_shared_by_both_branches_is_computed_before_the_if():
    # In ANF %0 is bound before the `if` (the scope enclosing both users), so the branch's
    # write comes after the read.
    text = """def @main(%flag: bool) -> int64 {
      let %c = ref(0i64);
      %0 = ref_read(%c);
      if (%flag) { ref_write(%c, 5i64); %0 } else { %0 }
    }"""
    assert int(run(text, np.asarray(True))) == 0


def test_a_node_used_in_one_branch_only_runs_with_it():
    text = """def @main(%flag: bool, %x: Tensor[(6), float32]) -> Tensor[(6), float32] {
      %0 = reshape(%x, newshape=[4]);
      if (%flag) { %x } else { reshape(%0, newshape=[6]) }
    }"""
    interp = Interpreter(rl.parse(V + text))        # not type-checked: %0 is ill-formed
    main = interp.global_closure("main")
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(interp.apply(main, [np.asarray(True), x]), x)
    with pytest.raises(InterpreterError, match="reshape failed"):
        interp.apply(main, [np.asarray(False), x])


def test_shared_reference_cell_is_one_cell():
    text = """def @main() -> (int64, int64) {
      %0 = ref(0i64);
      %1 = ref_write(%0, 7i64);
      %2 = (%1, ref_read(%0));
      (%2.1, ref_read(%0))
    }"""
    assert [int(v) for v in run(text)] == [7, 7]


def test_eval_keeps_its_bindings_and_reads_the_given_activation():
    interp = Interpreter(rl.parse(V + "def @main() -> int64 { 0i64 }"))
    x, y = Var("x"), Var("y")
    one = Constant(i64(1))
    expr = Let(y, Call(get_op("add"), (x, one)), Call(get_op("multiply"), (y, y)))
    env = Activation({id(x): i64(4)}, None)
    assert int(interp.eval(expr, env)) == 25
    assert int(env.values[id(y)]) == 5    # an eval's let stays bound in its activation
    with pytest.raises(InterpreterError, match="variable `%x` is not bound"):
        interp.eval(expr)


def test_kernel_failure_has_the_call_span():
    text = """def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(3, 3), float32] {
      reshape(%x, newshape=[3, 3])
    }"""
    interp = Interpreter(rl.parse(V + text))
    with pytest.raises(InterpreterError, match="reshape failed") as info:
        interp.apply(interp.global_closure("main"), [np.ones((2, 3), dtype=np.float32)])
    assert (info.value.span.line, info.value.span.column) == (3, 7)


# --- floating-point errors ------------------------------------------------------------------------

def test_kernels_never_warn_inside_or_outside_a_run():
    divide = implementation("divide", "numpy")
    one, zero = np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(divide([one, zero], None)).all()           # its own errstate
        implementation("sqrt", "numpy")([np.asarray([-4], dtype=np.int32)], None)  # NaN->int32
        with fp_errors_ignored():
            with fp_errors_ignored():                               # nests
                assert np.isnan(divide([zero, zero], None)).all()
            assert np.geterr()["divide"] == "ignore"
        out = run("""def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32])
                     -> Tensor[(2), float32] { log(divide(%a, %b)) }""", zero, zero)
        assert np.isnan(out).all()
    assert np.geterr() == before                                    # restored after each
    with pytest.warns(RuntimeWarning):
        _ = one / zero                                              # and not left ignored
