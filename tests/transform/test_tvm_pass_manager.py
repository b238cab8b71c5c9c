"""The pass manager against TVM v0.19's tests/python/relay/test_pass_manager.py: module and
function passes made with the decorators (functions and classes), PassInfo, Sequential
under a PassContext (required passes, opt levels, nesting), printing the IR and counting
passes with an instrument. The tests whose passes are relaylang's own also run through the
golden harness (re-parse, idempotence, same values on the interpreter)."""
from __future__ import annotations

import io

import numpy as np
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.expr import Constant, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import rewrite
from relaylang.transform import (
    FoldConstant,
    FunctionPass,
    InferType,
    ModulePass,
    PassContext,
    PassInfo,
    PrintIR,
    Sequential,
    function_pass,
    get_pass,
    module_pass,
)
from relaylang.transform.pass_infra import PassInstrument, canonical_name


def get_var_func():
    x = rl.var("x", shape=(5, 10))
    return rl.GlobalVar("myAbs"), rl.Function([x], rl.abs(x))


def update_func(func):
    """TVM's DoubleValues: every constant and variable use c becomes c + c."""
    def visit(old, new):
        if isinstance(old, (Var, Constant)):
            return rl.add(old, old)
        return None
    return rl.Function(list(func.params), rewrite(func.body, visit), func.ret_type,
                       func.type_params, func.attrs)


def opt_transform(node, ctx=None):
    """TVM's OptTester.transform."""
    if isinstance(node, IRModule):
        gv, func = get_var_func()
        out = IRModule({gv: func})
        out.functions.update(node.functions)
        return out
    return update_func(node)


def check_func(func, ref_func) -> None:
    a = InferType()(IRModule.from_expr(func))
    b = InferType()(IRModule.from_expr(ref_func))
    assert rl.structural_equal(a, b, map_free_vars=True), (rl.astext(a), rl.astext(b))


def global_named(mod: IRModule, name: str):
    return next(fn for gv, fn in mod.functions.items() if gv.name_hint == name)


def rand(shape):
    return np.random.default_rng(0).random(shape).astype("float32")


# TVM's test_module_pass
def test_module_pass() -> None:
    x, y = rl.var("x", shape=(5, 10)), rl.var("y", shape=(5, 10))
    func = rl.Function([x, y], rl.add(x, y))
    mod = IRModule({rl.GlobalVar("myAdd"): func})

    @module_pass(opt_level=0, name="module_pass_test")
    def transform(expr, ctx):
        return opt_transform(expr, ctx)

    assert isinstance(transform, ModulePass)
    assert transform.info.name == "module_pass_test" and transform.info.opt_level == 0

    def direct_transform(expr, ctx):
        return opt_transform(expr, ctx)
    direct = module_pass(direct_transform, opt_level=3)
    assert isinstance(direct, ModulePass)
    assert direct.info.name == "direct_transform" and direct.info.opt_level == 3

    assert "module_pass_test" in str(transform)
    updated = transform(mod)
    assert isinstance(updated, IRModule)
    check_func(global_named(updated, "myAbs"), get_var_func()[1])
    new_add = global_named(updated, "myAdd")
    check_func(new_add, func)
    a, b = rand((5, 10)), rand((5, 10))
    out = rl.evaluate(InferType()(IRModule.from_expr(new_add)), a, b)
    np.testing.assert_allclose(out, a + b, rtol=1e-5)


# TVM's test_function_class_pass: a decorated class; its instances are function passes
def test_function_class_pass() -> None:
    @function_pass(opt_level=1)
    class TestReplaceFunc:
        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            return self.new_func

    x = rl.var("x", shape=(10, 20))
    f1, f2 = rl.Function([x], x), rl.Function([x], rl.log(x))
    fpass = TestReplaceFunc(f1)
    assert isinstance(fpass, FunctionPass)
    assert fpass.info.opt_level == 1 and fpass.info.name == "TestReplaceFunc"
    out = fpass(IRModule.from_expr(f2))
    expected = InferType()(IRModule.from_expr(f1))
    assert rl.structural_equal(InferType()(out)["main"], expected["main"])


# TVM's test_function_pass
def test_function_pass() -> None:
    x = rl.var("x", shape=(10,))
    log = rl.Function([x], rl.log(x))
    mod = IRModule({rl.GlobalVar("myLog"): log})

    @function_pass(opt_level=1, name="function_pass_test")
    def transform(expr, mod, ctx):
        return opt_transform(expr, ctx)

    assert isinstance(transform, FunctionPass)
    assert transform.info.name == "function_pass_test" and transform.info.opt_level == 1

    def direct_transform(expr, mod, ctx):
        return opt_transform(expr, ctx)
    direct = function_pass(direct_transform, opt_level=0)
    assert isinstance(direct, FunctionPass)
    assert direct.info.name == "direct_transform" and direct.info.opt_level == 0

    assert "function_pass_test" in str(transform)
    updated = transform(mod)
    new_log = global_named(updated, "myLog")
    check_func(new_log, rl.Function([x], rl.log(rl.add(x, x))))
    check_func(new_log, opt_transform(log))
    a = rand((10,))
    out = rl.evaluate(InferType()(IRModule.from_expr(new_log)), a)
    np.testing.assert_allclose(out, np.log(a * 2), rtol=1e-5)


# TVM's test_module_class_pass
def test_module_class_pass() -> None:
    @module_pass(opt_level=1)
    class TestPipeline:
        def __init__(self, new_mod, replace):
            self.new_mod = new_mod
            self.replace = replace

        def transform_module(self, mod, ctx):
            return self.new_mod if self.replace else mod

    x = rl.var("x", shape=(10, 20))
    m1 = IRModule.from_expr(rl.Function([x], x))
    m2 = IRModule.from_expr(rl.Function([x], rl.log(x)))
    fpass = TestPipeline(m2, replace=True)
    assert fpass.info.name == "TestPipeline"
    assert fpass(m1) is m2
    assert TestPipeline(m2, replace=False)(m1) is m1


# TVM's test_pass_info
def test_pass_info() -> None:
    info = PassInfo(opt_level=1, name="xyz")
    assert info.opt_level == 1 and info.name == "xyz"


# TVM's test_sequential_pass (TVM's default Sequential name is "sequential"; relaylang's
# is "Sequential", the same pass name: names are compared without case)
def test_sequential_pass() -> None:
    x, y = rl.var("x", shape=(10,)), rl.var("y", shape=(10,))
    sub = rl.Function([x, y], rl.subtract(x, y))
    z = rl.var("z", shape=(10,))
    log = rl.Function([z], rl.log(z))
    v_sub, v_log = rl.GlobalVar("mySub"), rl.GlobalVar("myLog")

    def fresh():
        return IRModule({v_sub: sub, v_log: log})

    def ref_log():
        return rl.Function([x], rl.log(rl.add(x, x)))

    def ref_sub():
        return rl.Function([x, y], rl.subtract(rl.add(x, x), rl.add(y, y)))

    def ref_abs():
        a = rl.var("a", shape=(5, 10))
        return rl.Function([a], rl.abs(rl.add(a, a)))

    @module_pass(opt_level=1)
    def mod_transform(expr, ctx):
        return opt_transform(expr, ctx)

    @function_pass(opt_level=1)
    def func_transform(expr, mod, ctx):
        return opt_transform(expr, ctx)

    seq = Sequential(passes=[mod_transform, func_transform], opt_level=2)
    assert canonical_name(seq.info.name) == "sequential" and seq.info.opt_level == 2

    # no pass
    check_func(global_named(Sequential(opt_level=1, passes=[])(fresh()), "mySub"), sub)

    # only the module pass
    with PassContext(required_pass=["mod_transform"]):
        out = Sequential(opt_level=1, passes=[mod_transform])(fresh())
    check_func(global_named(out, "mySub"), sub)
    check_func(global_named(out, "myAbs"), get_var_func()[1])

    # only the function pass
    with PassContext(required_pass=["func_transform"]):
        out = Sequential(opt_level=1, passes=[func_transform])(fresh())
    check_func(global_named(out, "mySub"), ref_sub())
    check_func(global_named(out, "myLog"), ref_log())

    # both
    with PassContext(required_pass=["mod_transform", "func_transform"]):
        out = Sequential(opt_level=1, passes=[mod_transform, func_transform])(fresh())
    new_abs, new_sub = global_named(out, "myAbs"), global_named(out, "mySub")
    check_func(new_abs, ref_abs())
    check_func(new_sub, ref_sub())
    check_func(global_named(out, "myLog"), ref_log())
    a, b = rand((10,)), rand((10,))
    np.testing.assert_allclose(rl.evaluate(InferType()(IRModule.from_expr(new_sub)), a, b),
                               a * 2 - b * 2, rtol=1e-5)
    c = rand((5, 10))
    np.testing.assert_allclose(rl.evaluate(InferType()(IRModule.from_expr(new_abs)), c),
                               np.abs(c * 2), rtol=1e-5)


# TVM's test_sequential_with_scoping: FoldConstant then EliminateCommonSubexpr (and
# AlterOpLayout, with nothing to do) at opt level 3
def test_sequential_with_scoping() -> None:
    c_data = np.array((1, 2, 3)).astype("float32")
    c = rl.const(c_data)
    x = rl.var("x", shape=(1, 2, 3))
    y = rl.add(x, rl.multiply(rl.add(c, c), rl.const(2, "float32")))
    before = rl.Function([x], rl.add(rl.add(y, c), rl.add(y, c)))
    seq = Sequential([InferType(), FoldConstant(), get_pass("EliminateCommonSubexpr"),
                      get_pass("AlterOpLayout")])
    with PassContext(opt_level=3):
        out = seq(IRModule({rl.GlobalVar("main"): before}))
    golden = run_golden(IRModule.from_expr(before),
                        "InferType,FoldConstant,EliminateCommonSubexpr,AlterOpLayout",
                        opt_level=3)
    x = rl.var("x", shape=(1, 2, 3))
    z = rl.add(rl.add(x, rl.const((c_data + c_data) * 2)), rl.const(c_data))
    expected = InferType()(IRModule.from_expr(rl.Function([x], rl.add(z, z))))
    assert rl.structural_equal(out["main"], expected["main"])
    assert_same(golden, expected)


# TVM's test_nested_sequential_with_scoping: SimplifyExpr inside a Sequential inside a
# Sequential merges the reshapes (TVM's last step is reverse_reshape(32, 0, -1), which
# relaylang lacks: written here as the reshape it is)
def test_nested_sequential_with_scoping() -> None:
    def conv():
        x = rl.var("x", shape=(1, 16, 16, 16))
        w = rl.var("w", shape=(32, 16, 3, 3))
        return [x, w], rl.nn.conv2d(x, w, padding=(1, 1))
    params, y = conv()
    y = rl.reshape(rl.reshape(y, newshape=(1, 16, -1)), newshape=(4, 8, -1, 16))
    before = IRModule.from_expr(rl.Function(params, rl.reshape(y, newshape=(32, 16, -1))))
    with PassContext(opt_level=1):
        out = Sequential([Sequential([get_pass("SimplifyExpr")])])(before)
    params, y = conv()
    expected = IRModule.from_expr(rl.Function(params, rl.reshape(y, newshape=(32, 16, 16))))
    assert_same(InferType()(out), expected)
    assert_same(run_golden(before, "SimplifyExpr", opt_level=1), expected)


# TVM's test_print_ir: the module is printed between passes. TVM's PrintIR is a pass put in
# the Sequential; relaylang's is an instrument (here: print after FoldConstant).
def test_print_ir() -> None:
    x = rl.var("x", shape=(1, 2, 3))
    func = rl.Function([x], rl.multiply(rl.add(x, x), rl.const(2, "float32")))
    seq = Sequential([InferType(), FoldConstant(), get_pass("DeadCodeElimination")])
    stream = io.StringIO()
    with PassContext(opt_level=3, instruments=[PrintIR(after=("FoldConstant",), stream=stream)]):
        seq(IRModule({rl.GlobalVar("main"): func}))
    out = stream.getvalue()
    assert "FoldConstant" in out and "multiply" in out


class PassCounter(PassInstrument):
    def __init__(self):
        self.counts = 1234

    def enter_pass_ctx(self):
        self.counts = 0

    def exit_pass_ctx(self):
        self.counts = 0

    def run_before_pass(self, module, info):
        self.counts += 1


# TVM's test_print_debug_callback: an instrument is reset on entering and leaving the
# context and counts the passes run. A difference kept (docs/TVM_DIFFERENCES.md): TVM
# counts 6 for these 3 passes (its function passes run InferType inside, counted too; its
# own TODO calls this to be fixed); relaylang counts the 3 passes asked for.
def test_print_debug_callback() -> None:
    x = rl.var("x", shape=(1, 2, 3))
    func = rl.Function([x], rl.multiply(rl.add(x, x), rl.const(2, "float32")))
    seq = Sequential([InferType(), FoldConstant(), get_pass("DeadCodeElimination")])
    counter = PassCounter()
    with PassContext(opt_level=3, instruments=[counter]):
        assert counter.counts == 0
        seq(IRModule({rl.GlobalVar("main"): func}))
        assert counter.counts == 3
    assert counter.counts == 0
