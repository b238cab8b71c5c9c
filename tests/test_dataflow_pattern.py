"""The dataflow pattern language (relaylang/dataflow_pattern), mirroring TVM's
tests/python/relay/test_dataflow_pattern.py: each test names the TVM test it mirrors."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.dataflow_pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPatternCallback,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    rewrite,
    wildcard,
)
from relaylang.ir.attrs import DictAttrs
from relaylang.ir.expr import Call, Function, If, Let, Tuple, TupleGetItem

K_ELEMWISE = 0
K_BROADCAST = 1
K_INJECTIVE = 2


def with_attr(fn: Function, key: str, value: object) -> Function:
    entries = dict(fn.attrs.entries) if fn.attrs is not None else {}
    entries[key] = value
    return Function(fn.params, fn.body, fn.ret_type, fn.type_params, DictAttrs(tuple(entries.items())))


def equal(a, b) -> bool:
    return rl.structural_equal(a, b, map_free_vars=True)


# ---------------------------------------------------------------- nodes


def test_pattern_nodes():
    # TVM: test_expr_pattern, test_var_pattern, test_constant_pattern, test_wildcard_pattern
    ep = is_expr(rl.var("x", shape=(4, 1)))
    assert isinstance(ep, ExprPattern) and ep.expr.name_hint == "x"
    v = is_var("x")
    assert isinstance(v, VarPattern) and v.name == "x"
    assert isinstance(is_constant(), ConstantPattern)
    assert isinstance(wildcard(), WildcardPattern)


def test_call_function_tuple_patterns():
    # TVM: test_CallPattern, test_FunctionPattern, test_TuplePattern, test_TupleGetItemPattern
    wc1, wc2 = wildcard(), wildcard()
    c = is_op("add")(wc1, wc2)
    assert isinstance(c, CallPattern) and c.args[0] is wc1 and c.args[1] is wc2
    f = FunctionPattern([wc1, wc2], c)
    assert f.params == [wc1, wc2] and f.body is c
    t = is_tuple([wc1, wc2])
    assert isinstance(t, TuplePattern) and t[1] is wc2 and len(t) == 2
    tgi = is_tuple_get_item(t, 1)
    assert isinstance(tgi, TupleGetItemPattern) and tgi.tuple is t and tgi.index == 1


def test_constraint_patterns():
    # TVM: test_AltPattern, test_TypePattern, test_DataTypePattern, test_ShapePattern,
    # test_AttrPattern, test_IfPattern, test_LetPattern
    assert isinstance(is_op("add") | is_op("subtract"), AltPattern)
    ttype = rl.TensorType((10, 10), "float32")
    assert isinstance(has_type(ttype), TypePattern) and has_type(ttype).type is ttype
    assert isinstance(has_dtype("float16"), DataTypePattern) and has_dtype("float16").dtype == "float16"
    assert isinstance(has_shape([10, 10]), ShapePattern) and has_shape([10, 10]).shape == (10, 10)
    op = is_op("add").has_attr({"TOpPattern": K_ELEMWISE})
    assert isinstance(op, AttrPattern) and op.attrs["TOpPattern"] == K_ELEMWISE
    x, y = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(x, y), x, y)
    assert isinstance(pat, IfPattern) and isinstance(pat.cond, CallPattern)
    let_var = is_var("let")
    pat = is_let(let_var, is_op("less")(x, y), let_var)
    assert isinstance(pat, LetPattern) and pat.var is let_var


def test_bad_patterns_are_refused():
    with pytest.raises(ValueError, match="unknown operator"):
        is_op("no_such_op")
    with pytest.raises(TypeError, match="pattern"):
        is_op("add")(wildcard(), 3)


def test_pattern_text():
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), is_constant()).optional(
        lambda x: is_op("nn.bias_add")(x, wildcard())))
    assert str(pattern) == "nn.relu((nn.conv2d(*, const) | nn.bias_add(nn.conv2d(*, const), *)))"


# ---------------------------------------------------------------- matching


def test_match_op():
    # TVM: test_match_op, test_no_match_op, test_match_op_or
    from relaylang.op import get
    assert is_op("add").match(get("add"))
    assert not is_op("add").match(get("subtract"))
    alt = is_op("add") | is_op("subtract")
    assert alt.match(get("add")) and alt.match(get("subtract"))


def test_match_call_commutative():
    # TVM: test_match_call_commutive, test_no_match_call_commutive
    x, y = rl.var("x"), rl.var("y")
    assert is_op("add")(is_var("x"), is_var("y")).match(rl.add(x, y))
    assert is_op("add")(is_var("x"), is_var("y")).match(rl.add(y, x))
    assert is_op("multiply")(is_var("x"), is_var("y")).match(rl.multiply(y, x))
    assert is_op("subtract")(is_var("x"), is_var("y")).match(rl.subtract(x, y))
    assert not is_op("subtract")(is_var("x"), is_var("y")).match(rl.subtract(y, x))
    assert not is_op("divide")(is_var("x"), is_var("y")).match(rl.divide(y, x))


def test_match_call():
    # TVM: test_match_call, test_no_match_call
    x, y = rl.var("x"), rl.var("y")
    assert is_op("add")(wildcard(), wildcard()).match(rl.add(x, y))
    call_pattern = wildcard()(None)
    assert call_pattern.match(rl.nn.relu(x)) and call_pattern.match(rl.add(x, y))
    assert not is_op("add")(wildcard(), wildcard()).match(rl.subtract(x, y))


def test_match_func():
    # TVM: test_match_func, test_no_match_func
    x, y = rl.var("x"), rl.var("y")
    wc1, wc2 = wildcard(), wildcard()
    assert FunctionPattern([wc1, wc2], is_op("add")(wc1, wc2)).match(rl.Function([x, y], rl.add(x, y)))
    assert FunctionPattern(None, wildcard()).match(rl.Function([x], x))
    assert FunctionPattern(None, wildcard()).match(rl.Function([x, y], rl.add(x, y)))
    wc1, wc2 = wildcard(), wildcard()
    assert not FunctionPattern([wc1, wc2], is_op("add")(wc1, wc2)).match(
        rl.Function([x, y], rl.subtract(x, y)))


def test_match_if_and_let():
    # TVM: test_match_if, test_no_match_if, test_match_let, test_no_match_let
    px, py = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(px, py), px, py)
    x, y = rl.var("x"), rl.var("y")
    assert pat.match(If(rl.less(x, y), x, y))
    assert not pat.match(If(rl.greater(x, y), x, y))
    assert not pat.match(If(rl.less(x, y), y, x))
    let_var = is_var("let")
    pat = is_let(let_var, is_op("less")(px, py), let_var)
    lv = rl.var("let")
    assert pat.match(Let(lv, rl.less(x, y), lv))
    assert not pat.match(Let(lv, rl.greater(x, y), lv))
    assert not pat.match(Let(lv, rl.less(x, y), rl.multiply(lv, x)))


def test_match_option():
    # TVM: test_match_option, test_no_match_option
    x, w, b = rl.var("x"), rl.var("w"), rl.var("b")
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()).optional(
        lambda x: is_op("nn.bias_add")(x, wildcard())))
    conv2d = rl.nn.conv2d(x, w)
    assert pattern.match(rl.nn.relu(conv2d))
    assert pattern.match(rl.nn.relu(rl.nn.bias_add(conv2d, b)))
    assert not pattern.match(rl.tanh(conv2d))
    assert not pattern.match(rl.nn.relu(rl.nn.bias_add(rl.nn.dense(x, w), b)))
    assert not pattern.match(rl.nn.relu(rl.add(conv2d, w)))

    pattern = is_op("nn.conv2d")(wildcard(), wildcard())
    pattern = pattern.optional(is_op("nn.relu")).optional(is_op("tanh"))
    relu = rl.nn.relu(conv2d)
    assert pattern.match(conv2d) and pattern.match(relu)
    assert pattern.match(rl.tanh(conv2d)) and pattern.match(rl.tanh(relu))
    assert not pattern.match(rl.nn.relu(rl.tanh(conv2d)))


def test_match_const():
    # TVM: test_match_const
    pattern = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), is_constant()), wildcard())
    x = rl.var("x", shape=(1, 3, 8, 8))
    b = rl.var("b", shape=(3,))
    assert not pattern.match(rl.nn.bias_add(rl.nn.conv2d(x, rl.var("w", shape=(3, 3, 3, 3))), b))
    w = rl.const(np.ones((3, 3, 3, 3), "float32"))
    assert pattern.match(rl.nn.bias_add(rl.nn.conv2d(x, w), b))


def test_match_tuple():
    # TVM: test_match_tuple, test_no_match_tuple
    from relaylang.op import get
    x, y, z = rl.var("x"), rl.var("y"), get("add")
    tuple_pattern = is_tuple((is_var("x"), wildcard(), is_op("add")))
    assert tuple_pattern.match(Tuple((x, y, z)))
    assert is_tuple_get_item(tuple_pattern, 1).match(TupleGetItem(Tuple((x, y, z)), 1))
    any_index = is_tuple_get_item(tuple_pattern)
    assert all(any_index.match(TupleGetItem(Tuple((x, y, z)), i)) for i in range(3))
    concat_pattern = is_op("concatenate")(is_tuple(None))
    assert concat_pattern.match(rl.concatenate(rl.Tuple([x]), axis=0))
    assert concat_pattern.match(rl.concatenate(rl.Tuple([x, y]), axis=0))
    assert not is_tuple((is_var("x"), wildcard(), is_op("add"), wildcard())).match(Tuple((x, y, z)))
    assert not is_tuple_get_item(tuple_pattern, 1).match(TupleGetItem(Tuple((x, y, z)), 2))


def test_match_types():
    # TVM: test_match_type, test_no_match_type, test_match_dtype, test_no_match_dtype,
    # test_match_shape, test_no_match_shape
    x = rl.var("x", shape=(10, 10), dtype="float32")
    xi = rl.var("x", shape=(10, 10), dtype="int32")
    assert has_type(rl.TensorType((10, 10), "float32")).match(x)
    assert not has_type(rl.TensorType((10, 10), "float32")).match(xi)
    assert has_dtype("float32").match(x) and not has_dtype("float32").match(xi)
    assert has_shape((10, 10)).match(x) and not has_shape((10, 5)).match(xi)
    # an untyped call is typed on demand, as TVM's InferType(expr)
    assert has_shape((10, 10)).match(rl.add(x, x))


def test_match_attrs():
    # TVM: test_match_op_attr, test_no_match_op_attr, test_match_func_attr,
    # test_no_match_func_attr, test_match_call_attr, test_no_match_call_attr,
    # test_match_call_attr_dtype
    x, y = rl.var("x"), rl.var("y")
    assert is_op("add").has_attr({"TOpPattern": K_BROADCAST})(wildcard(), wildcard()).match(rl.add(x, y))
    assert not is_op("nn.dense").has_attr({"TOpPattern": K_ELEMWISE})(
        wildcard(), wildcard()).match(rl.nn.dense(x, y))
    op_pat = is_op("add").has_attr({"TOpPattern": K_BROADCAST})(wildcard(), wildcard())
    assert not op_pat.match(rl.subtract(x, y))
    z = rl.var("z")
    assert not op_pat.match(Let(z, rl.add(x, y), z))

    f = with_attr(rl.Function([x, y], rl.add(x, y)), "Composite", "add")
    assert wildcard().has_attr({"Composite": "add"}).match(f)
    assert not wildcard().has_attr({"Composite": "add"}).match(
        with_attr(rl.Function([x, y], rl.add(x, y)), "RandomTest", "add"))
    assert not wildcard().has_attr({"Composite": "add"}).match(
        with_attr(rl.Function([x, y], rl.add(x, y)), "Composite", "conv_bias"))

    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    assert conv.has_attr({"data_layout": "NCHW"}).match(rl.nn.conv2d(x, y))
    assert conv.has_attr({"kernel_size": [3, 3]}).match(rl.nn.conv2d(x, y, kernel_size=[3, 3]))
    assert not conv.has_attr({"data_layout": "NHWC"}).match(rl.nn.conv2d(x, y))
    assert not conv.has_attr({"RandomAttr": "NCHW"}).match(rl.nn.conv2d(x, y))
    assert not conv.has_attr({"kernel_size": [3, 3]}).match(rl.nn.conv2d(x, y, kernel_size=[2, 1]))
    assert is_op("cast")(wildcard()).has_attr({"dtype": "float32"}).match(rl.cast(x, dtype="float32"))

    a, b = rl.var("a"), rl.var("b")
    call_attr = DictAttrs((("call_attr", "attr"),))
    call_has_attr = wildcard()(wildcard()).has_attr({"call_attr": "attr"})
    assert call_has_attr.match(Call(a, (b,), call_attr))
    assert wildcard()(wildcard()).has_attr({}).match(Call(a, (b,), DictAttrs(())))
    assert not call_has_attr.match(Call(a, (b,)))
    assert not call_has_attr.match(Call(a, (b,), DictAttrs((("wrong", "attr"),))))
    assert not call_has_attr.match(Call(a, (b,), DictAttrs((("call_attr", "wrong"),))))


def test_match_diamond():
    # TVM: test_match_diamond, test_no_match_diamond, test_match_fake_diamond,
    # test_not_fuse_multi_diamond
    is_conv2d = is_op("nn.conv2d")(wildcard(), wildcard())
    diamond = is_op("add")(is_op("nn.relu")(is_conv2d), is_op("nn.leaky_relu")(is_conv2d))
    inp, weight = rl.var("input"), rl.var("weight")
    conv2d = rl.nn.conv2d(inp, weight)
    relu, leaky = rl.nn.relu(conv2d), rl.nn.leaky_relu(conv2d, alpha=0.0)
    assert diamond.match(rl.add(relu, leaky))
    assert not diamond.match(leaky) and not diamond.match(relu)
    other = rl.nn.leaky_relu(rl.nn.conv2d(rl.var("i2"), rl.var("w2")), alpha=0.0)
    assert not diamond.match(rl.add(relu, other))
    assert not diamond.match(rl.add(rl.add(relu, leaky), conv2d))


def _elemwise():
    return wildcard().has_attr({"TOpPattern": K_ELEMWISE})(wildcard())


def test_match_dominator():
    # TVM: test_match_dominator
    diamond = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), _elemwise(),
                        is_op("add")(wildcard(), wildcard()))
    inp, weight = rl.var("input"), rl.var("weight")
    conv2d = rl.nn.conv2d(inp, weight)
    relu = rl.nn.relu(rl.nn.relu(conv2d))
    leaky = rl.nn.leaky_relu(conv2d, alpha=0.0)
    assert diamond.match(rl.add(relu, leaky))
    assert diamond.match(rl.add(rl.tanh(relu), leaky))          # deeper branch
    single = rl.nn.relu(rl.nn.relu(conv2d))
    assert diamond.match(rl.add(single, rl.tanh(single)))      # single branch
    fuzzy = dominates(is_op("nn.conv2d")(wildcard(), wildcard()),
                      _elemwise() | is_op("add")(wildcard(), wildcard()),
                      is_op("add")(wildcard(), wildcard()))
    relu = rl.nn.relu(conv2d)
    relu = rl.add(relu, relu)
    assert fuzzy.match(rl.add(rl.tanh(relu), leaky))           # fuzzy path, nested diamond


def test_match_dominator2():
    # TVM: test_match_dominator2
    eltwise = wildcard().has_attr({"TOpPattern": K_ELEMWISE})(None)
    broadcast = wildcard().has_attr({"TOpPattern": K_BROADCAST})(None)
    injective = wildcard().has_attr({"TOpPattern": K_INJECTIVE})(wildcard())
    pattern = injective.dominates(is_op("nn.conv2d")(wildcard(), wildcard()), eltwise | broadcast)
    conv2d = rl.nn.conv2d(rl.var("input"), rl.var("weight"))
    out = rl.reshape(rl.nn.relu(rl.nn.bias_add(conv2d, rl.var("bias"))), newshape=[-1, 2, 8])
    assert pattern.match(out)


def test_not_match_dominator():
    # TVM: test_not_match_dominator, test_not_match_dominator2, test_at_most_one_parent
    diamond = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), _elemwise(),
                        is_op("add")(wildcard(), wildcard()))
    relu = rl.nn.relu(rl.nn.conv2d(rl.var("i1"), rl.var("w1")))
    leaky = rl.nn.leaky_relu(rl.nn.conv2d(rl.var("i2"), rl.var("w2")), alpha=0.0)
    assert not diamond.match(rl.add(relu, leaky))                 # fake diamond
    inp = rl.var("input")
    conv2d = rl.nn.conv2d(inp, rl.var("weight"))
    relu = rl.nn.relu(conv2d)
    assert not diamond.match(rl.add(rl.add(relu, relu), rl.nn.leaky_relu(conv2d, alpha=0.0)))
    assert not diamond.match(rl.add(rl.nn.relu(inp), rl.nn.leaky_relu(conv2d, alpha=0.0)))
    relu = rl.nn.relu(rl.nn.relu(inp))
    assert not diamond.match(rl.add(relu, rl.tanh(relu)))          # no conv

    P = is_op("nn.conv2d")(wildcard(), wildcard())
    pattern = dominates(P, is_op("nn.relu")(wildcard()), is_op("add")(wildcard(), wildcard()))
    x, w = rl.var("x"), rl.var("w")
    n6 = rl.nn.conv2d(x, w)
    n8 = rl.nn.conv2d(rl.tanh(n6), w)
    assert not pattern.match(rl.add(n8, rl.nn.relu(n6)))
    assert not pattern.match(rl.add(rl.nn.relu(n8), rl.nn.relu(n6)))


def test_match_typed_dominator():
    # TVM: test_match_typed_dominator, test_no_match_typed_dominator
    inp = rl.var("input", rl.TensorType((1, 3, 12, 12), "float32"))
    weight = rl.var("weight", rl.TensorType((3, 3, 3, 3), "float32"))
    conv2d = rl.nn.conv2d(inp, weight)
    out = rl.add(rl.nn.relu(rl.nn.relu(conv2d)), rl.nn.leaky_relu(conv2d, alpha=0.0))

    def diamond(dtype: str, shape: list[int]):
        return dominates(is_op("nn.conv2d")(wildcard(), wildcard()), _elemwise().has_dtype(dtype),
                         is_op("add")(wildcard(), wildcard()).has_shape(shape))
    assert diamond("float32", [1, 3, 10, 10]).match(out)
    assert not diamond("float32", [1, 1, 10, 10]).match(out)
    assert not diamond("float16", [1, 3, 10, 10]).match(out)


def test_dominator_over_a_deep_path():
    # no recursion over the IR: a 10,000-long elementwise path between parent and child
    x = rl.var("x", shape=(4,))
    conv = rl.nn.relu(x)
    y = conv
    for _ in range(10000):
        y = rl.exp(y)
    out = rl.add(y, conv)
    pattern = dominates(is_op("nn.relu")(wildcard()), _elemwise(), is_op("add")(wildcard(), wildcard()))
    assert pattern.match(out)


# ---------------------------------------------------------------- rewriting


class _SubFromAdd(DFPatternCallback):
    def __init__(self) -> None:
        super().__init__()
        self.pattern = is_op("add")(wildcard(), wildcard())

    def callback(self, pre, post, node_map):
        return rl.subtract(post.args[0], post.args[1])


def test_rewrite():
    # TVM: test_rewrite, test_rewrite_func
    x, y, w = rl.var("x"), rl.var("y"), rl.var("w")
    sub = is_op("subtract")(wildcard(), wildcard())
    assert sub.match(rewrite(_SubFromAdd(), rl.add(x, y)))
    inpf, weightf = rl.var("input"), rl.var("weight")
    func = rl.Function([inpf, weightf], rl.nn.relu(rl.nn.conv2d(inpf, weightf)))
    assert sub.match(rewrite(_SubFromAdd(), rl.add(Call(func, (x, w)), y)))


def test_rewrite_func_with_attr():
    # TVM: test_rewrite_func_with_attr
    x, y = rl.var("x"), rl.var("y")
    f = with_attr(rl.Function([x, y], rl.add(x, y)), "Composite", "add")
    a, b = rl.var("a"), rl.var("b")

    class Inline(DFPatternCallback):
        def __init__(self) -> None:
            super().__init__()
            self.pattern = wildcard().has_attr({"Composite": "add"})(wildcard(), wildcard())

        def callback(self, pre, post, node_map):
            return rl.add(post.args[0], post.args[1])
    out = rewrite(Inline(), rl.abs(Call(f, (a, b))))
    assert is_op("abs")(is_op("add")(wildcard(), wildcard())).match(out)


def test_nested_rewrite():
    # TVM: test_nested_rewrite
    class Same(DFPatternCallback):
        def __init__(self, pattern) -> None:
            super().__init__()
            self.pattern = pattern

        def callback(self, pre, post, node_map):
            return post
    x, y = rl.var("x"), rl.var("y")
    n0 = rl.add(x, rl.add(y, y))
    out = rl.add(rl.add(x, n0), n0)
    a, b = wildcard(), wildcard()
    p0 = is_op("add")(a, b)
    pat = is_op("add")(p0, is_op("add")(p0, a))
    assert equal(rewrite(Same(pat), out), out)


class BatchnormCallback(DFPatternCallback):
    def __init__(self) -> None:
        super().__init__()
        self.x, self.var, self.mean = wildcard(), wildcard(), wildcard()
        self.beta, self.gamma, self.eps = wildcard(), wildcard(), is_constant()
        self.pattern = self.gamma * (self.x - self.mean) / is_op("sqrt")(self.var + self.eps) \
            + self.beta

    def callback(self, pre, post, node_map):
        x, var, mean = node_map[self.x][0], node_map[self.var][0], node_map[self.mean][0]
        beta, gamma = node_map[self.beta][0], node_map[self.gamma][0]
        eps = node_map[self.eps][0]
        return TupleGetItem(rl.nn.batch_norm(x, gamma, beta, mean, var,
                                             epsilon=float(eps.data.item())), 0)


def _bn(x, gamma, beta, mean, var):
    return TupleGetItem(rl.nn.batch_norm(x, gamma, beta, mean, var,
                                         epsilon=float(np.float32(1e-5))), 0)


def test_fuse_batchnorm():
    # TVM: test_fuse_batchnorm, test_no_fuse_batchnorm, test_fuse_double_batchnorm,
    # test_partial_fuse_double_batchnorm
    x, var, mean, beta, gamma = (rl.var(n) for n in ("x", "var", "mean", "beta", "gamma"))
    eps = rl.const(1e-5)

    def bn_text(data, tail=rl.add):
        return tail(rl.divide(rl.multiply(gamma, rl.subtract(data, mean)),
                              rl.sqrt(rl.add(var, eps))), beta)
    assert equal(rewrite(BatchnormCallback(), bn_text(x)), _bn(x, gamma, beta, mean, var))
    fake = bn_text(x, rl.subtract)
    assert equal(rewrite(BatchnormCallback(), fake), fake)
    out = rewrite(BatchnormCallback(), bn_text(bn_text(x)))
    assert equal(out, _bn(_bn(x, gamma, beta, mean, var), gamma, beta, mean, var))
    out = rewrite(BatchnormCallback(), bn_text(fake))
    assert equal(out, _bn(fake, gamma, beta, mean, var))


def test_fuse_batchnorm_commutation():
    # TVM: test_fuse_batchnorm_commutation
    x, var, mean, beta, gamma = (rl.var(n) for n in ("x", "var", "mean", "beta", "gamma"))
    sq = rl.sqrt(rl.add(var, rl.const(1e-5)))
    expected = _bn(x, gamma, beta, mean, var)
    commuted = rl.add(beta, rl.divide(rl.multiply(gamma, rl.subtract(x, mean)), sq))
    assert equal(rewrite(BatchnormCallback(), commuted), expected)
    associated = rl.add(rl.multiply(gamma, rl.divide(rl.subtract(x, mean), sq)), beta)
    assert equal(rewrite(BatchnormCallback(), associated), expected)


def test_rewrite_once():
    # TVM: test_rewrite_once
    class ConcatRewriter(DFPatternCallback):
        def __init__(self, rewrite_once: bool) -> None:
            super().__init__(rewrite_once=rewrite_once)
            self.pattern = is_op("concatenate")(None)

        def callback(self, pre, post, node_map):
            fields = post.args[0].fields
            if len(fields) > 1:            # drop the last field each time
                return rl.concatenate(rl.Tuple(list(fields[:-1])), axis=0)
            return post
    x, y, z = rl.var("x"), rl.var("y"), rl.var("z")
    concat = rl.concatenate(rl.Tuple([x, y, z]), axis=0)
    once = rewrite(ConcatRewriter(True), concat)
    assert len(once.args[0].fields) == 2
    repeated = rewrite(ConcatRewriter(False), concat)
    assert len(repeated.args[0].fields) == 1


def test_algebraic_simplify():
    # TVM: test_algebraic_simplify (its rewrite callbacks, on a few of its cases)
    class Simplify(DFPatternCallback):
        def __init__(self) -> None:
            super().__init__()
            self.x = wildcard()
            self.zero = is_expr(rl.const(0.0))
            self.one = is_expr(rl.const(1.0))
            self.pattern = (self.x + self.zero) | (self.x * self.one) | (self.x - self.zero)

        def callback(self, pre, post, node_map):
            return node_map[self.x][0]
    x, y = rl.var("x"), rl.var("y")
    assert rewrite(Simplify(), rl.add(x, rl.const(0.0))) is x
    assert rewrite(Simplify(), rl.multiply(rl.const(1.0), x)) is x
    out = rewrite(Simplify(), rl.add(rl.multiply(x, rl.const(1.0)), rl.subtract(y, rl.const(0.0))))
    assert equal(out, rl.add(x, y))


def test_rewrite_deep_chain():
    # a 10,000-node chain: matching and rewriting are iterative
    x = rl.var("x", shape=(4,))
    y = x
    for _ in range(5000):
        y = rl.add(rl.nn.relu(y), rl.const(1.0))
    out = rewrite(_SubFromAdd(), y)
    assert is_op("subtract")(wildcard(), wildcard()).match(out)


# ---------------------------------------------------------------- partitioning


def _conv_bias_relu(x, w, b):
    return rl.nn.relu(rl.nn.bias_add(rl.nn.conv2d(x, w), b))


def test_double_partition():
    # TVM: test_double_partition
    conv2d_p = is_op("nn.conv2d")(wildcard(), wildcard())
    bias_add_p = is_op("nn.bias_add")(conv2d_p, wildcard())
    relu_p = is_op("nn.relu")(bias_add_p)
    x, w, b, w2, b2 = (rl.var(n) for n in ("input", "weight", "bias", "weight", "bias"))
    graph = rl.nn.bias_add(rl.nn.conv2d(_conv_bias_relu(x, w, b), w2), b2)
    partitioned = graph
    for pat, label in [(relu_p, "conv_bias_relu"), (bias_add_p, "conv_bias")]:
        partitioned = pat.partition(partitioned, {"Composite": label})

    i, wf, bf = rl.var("input"), rl.var("weight"), rl.var("bias")
    func0 = with_attr(with_attr(rl.Function([i, wf, bf], _conv_bias_relu(i, wf, bf)),
                                "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_"),
                      "Composite", "conv_bias_relu")
    i, wf, bf = rl.var("input"), rl.var("weight"), rl.var("bias")
    func1 = with_attr(with_attr(rl.Function([i, wf, bf], rl.nn.bias_add(rl.nn.conv2d(i, wf), bf)),
                                "PartitionedFromPattern", "nn.conv2d_nn.bias_add_"),
                      "Composite", "conv_bias")
    expected = Call(func1, (Call(func0, (x, w, b)), w2, b2))
    assert equal(partitioned, expected)


def _generate_diamond(inp, weight):
    conv2d = rl.nn.conv2d(inp, weight)
    relu = rl.nn.relu(rl.nn.relu(conv2d))
    return rl.add(relu, rl.nn.leaky_relu(conv2d, alpha=0.0))


def test_partition_dominator():
    # TVM: test_partition_dominator
    diamond = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), _elemwise(),
                        is_op("add")(wildcard(), wildcard()))
    inp, weight = rl.var("input"), rl.var("weight")
    a, b = rl.multiply(inp, inp), rl.multiply(weight, weight)
    partitioned = diamond.partition(_generate_diamond(a, b))
    i, w = rl.var("input"), rl.var("weight")
    f = with_attr(rl.Function([i, w], _generate_diamond(i, w)), "PartitionedFromPattern",
                  "nn.conv2d_nn.relu_nn.relu_nn.leaky_relu_add_")
    assert equal(partitioned, Call(f, (a, b)))


def test_partition_refusals():
    # TVM: test_overlappting_partitions, test_partition_overused
    bn_node = is_op("nn.batch_norm")(wildcard(), wildcard(), wildcard(), wildcard(), wildcard())
    tgi = TupleGetItemPattern(bn_node, 0)
    x, var, mean, beta, gamma = (rl.var(n) for n in ("x", "var", "mean", "beta", "gamma"))
    bn = rl.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)
    add = rl.add(TupleGetItem(bn, 0), TupleGetItem(bn, 0))
    assert tgi.partition(add) is add
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    conv2d = rl.nn.conv2d(rl.var("input"), rl.var("weight"))
    out = rl.add(rl.nn.relu(conv2d), conv2d)
    assert pattern.partition(out) is out


def test_partition_fuzzy_tuple():
    # TVM: test_partition_fuzzy_tuple
    x, y = rl.var("x"), rl.var("y")
    z = rl.add(x, y)
    concat_pattern = is_op("concatenate")(is_tuple(None))

    def concat(*args):
        return rl.concatenate(rl.Tuple(list(args)), axis=0)
    for args in ((x,), (x, y), (x, y, z)):
        params = [rl.var(f"p{i}") for i in range(len(args))]
        func = with_attr(rl.Function(params, concat(*params)), "PartitionedFromPattern",
                         "Tuple_concatenate_")
        assert equal(concat_pattern.partition(concat(*args)), Call(func, args))


def test_partition_check():
    # TVM: test_partition_check, test_partition_check_types
    pattern = is_op("nn.relu")(is_op("nn.conv2d")(is_var("input"), wildcard()))

    def check(pre):
        return pre.args[0].attrs.data_layout == "NCHW"
    x, w = rl.var("input"), rl.var("weight")
    relu = rl.nn.relu(rl.nn.conv2d(x, w))
    xf, wf = rl.var("input"), rl.var("weight")
    func = with_attr(rl.Function([xf, wf], rl.nn.relu(rl.nn.conv2d(xf, wf))),
                     "PartitionedFromPattern", "nn.conv2d_nn.relu_")
    assert equal(pattern.partition(relu, check=check), Call(func, (x, w)))
    relu = rl.nn.relu(rl.nn.conv2d(x, w, data_layout="NHWC"))
    assert pattern.partition(relu, check=check) is relu


def test_partition_option():
    # TVM: test_partition_option
    x, w, b = rl.var("x"), rl.var("w"), rl.var("b")
    conv2d = is_op("nn.conv2d")(wildcard(), wildcard())
    bias = conv2d.optional(lambda x: is_op("nn.bias_add")(x, wildcard()))
    pattern1 = is_op("nn.relu")(bias)
    conv2d = is_op("nn.conv2d")(wildcard(), wildcard())
    bias = is_op("nn.bias_add")(conv2d, wildcard())
    pattern2 = bias.optional(lambda x: is_op("nn.relu")(x))
    relu = _conv_bias_relu(x, w, b)
    xf, wf, bf = rl.var("x"), rl.var("w"), rl.var("b")
    func = with_attr(rl.Function([xf, wf, bf], _conv_bias_relu(xf, wf, bf)),
                     "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_")
    assert equal(pattern1.partition(relu), Call(func, (x, w, b)))
    assert equal(pattern2.partition(relu), Call(func, (x, w, b)))


def test_partition_constant_embedding():
    # TVM: test_partition_constant_embedding
    x, b = rl.var("x"), rl.var("b")
    wc = rl.const(np.ones((2, 2, 1, 1), "float32"))
    relu = _conv_bias_relu(x, wc, b)

    def func_of(const_inside: bool):
        xf, bf = rl.var("x"), rl.var("b")
        if const_inside:
            return Call(with_attr(rl.Function([xf, bf], _conv_bias_relu(xf, wc, bf)),
                                  "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_"),
                        (x, b))
        wf = rl.var("w")
        return Call(with_attr(rl.Function([xf, wf, bf], _conv_bias_relu(xf, wf, bf)),
                              "PartitionedFromPattern", "nn.conv2d_nn.bias_add_nn.relu_"),
                    (x, wc, b))

    def pattern(weight):
        return is_op("nn.relu")(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), weight),
                                                     wildcard()))
    assert equal(pattern(wildcard()).partition(relu), func_of(False))
    assert equal(pattern(is_var()).partition(relu), relu)
    assert equal(pattern(is_constant()).partition(relu), func_of(True))
    assert equal(pattern(is_expr(wc)).partition(relu), func_of(True))
    assert equal(pattern(is_constant() | is_var()).partition(relu), func_of(True))
    assert equal(pattern(wildcard() | is_constant()).partition(relu), func_of(False))


def test_matched_outside_but_dominated():
    # TVM: test_matched_outside_but_dominated: a value inside the match used by a node
    # the root post-dominates stays a legal partition
    x = rl.var("x", shape=(4,))
    a = rl.exp(x)
    inner = rl.nn.relu(a)
    side = rl.tanh(inner)                  # uses an inner value; the root dominates it
    root = rl.add(rl.nn.relu(inner), side)
    pattern = is_op("add")(is_op("nn.relu")(is_op("nn.relu")(wildcard())), wildcard())
    out = pattern.partition(root)
    assert isinstance(out, Call) and isinstance(out.op, Function)


def test_partition_parallel_branch_with_same_input():
    # TVM: test_partition_parallel_branch_with_same_input
    x = rl.var("x", shape=(1, 4))
    w = rl.var("w", shape=(4, 4))
    branch = is_op("nn.relu")(is_op("nn.dense")(wildcard(), wildcard()))
    pattern = is_op("add")(branch, branch)     # one pattern node: one expression
    d1 = rl.nn.relu(rl.nn.dense(x, w))
    assert pattern.match(rl.add(d1, d1))
    d2 = rl.nn.relu(rl.nn.dense(x, w))
    assert not pattern.match(rl.add(d1, d2))


def test_partition_deep_chain():
    x = rl.var("x", shape=(4,))
    y = x
    for _ in range(5000):
        y = rl.nn.relu(rl.add(y, rl.const(1.0)))
    out = is_op("nn.relu")(is_op("add")(wildcard(), is_constant())).partition(y)
    assert isinstance(out.op, Function) and out.op.attrs.get("PartitionedFromPattern") == "add_nn.relu_"


def test_rewrite_with_pattern_recursion():
    # TVM: test_rewrite_with_pattern_recursion (a wildcard redirected to the pattern itself)
    data = rl.var("data", rl.TensorType((2, 8), "float32"))
    feat = rl.nn.dense(data, rl.const(np.zeros((4, 8))))
    for _ in range(6):
        feat = rl.cast(feat, dtype="float32")
    expected = rl.nn.relu(feat)

    class TheRewrite(DFPatternCallback):
        def __init__(self, pattern) -> None:
            super().__init__(rewrite_once=True)
            self.pattern = pattern

        def callback(self, pre, post, node_map):
            return rl.nn.relu(post)

    def dense():
        return is_op("nn.dense")(wildcard(), wildcard())
    redirect = wildcard()
    call_args = is_op("cast")(redirect)
    redirect.redirect_to(call_args | dense())
    redirect_left = wildcard()
    alt_left = is_op("cast")(redirect_left | dense())
    redirect_left.redirect_to(alt_left)
    redirect_right = wildcard()
    alt_right = is_op("cast")(dense() | redirect_right)
    redirect_right.redirect_to(alt_right)
    for pattern in (call_args, alt_left, alt_right):
        assert equal(rewrite(TheRewrite(pattern), feat), expected)
        assert "<recursive>" in str(pattern)
