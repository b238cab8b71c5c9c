"""Deterministic benchmark inputs: GPT-2-style Relay text, same-sized MLIR text, token counts.

`gpt2_module_text` lays a GPT-2 model out the way TVM's text printer did
(apache/tvm:src/printer/relay_text_printer.cc; LANGUAGE.md §11): version line,
one `def @main` whose parameters (inputs, then weights in order of first use)
sit on one line with their `/* ty=... */` comments, then one graph binding per
line, each call annotated with its type, literals annotated inline. The ops are
those TVM's PyTorch frontend emits for HuggingFace's GPT2LMHeadModel: Conv1D as
reshape/transpose/nn.dense/add, attention through nn.batch_matmul, the causal
mask through strided_slice/cast/where, gelu_new spelled out with power and
tanh, nn.dropout followed by its `.0` projection. Weights are parameters, so
the text needs no metadata section.

`mlir_module_text` writes a generic-form MLIR module of the same number of
operations for xDSL's parser; `count_tokens` counts Relay lexical tokens
(LANGUAGE.md §2) so that tokens per second measures real work.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SEQ, HIDDEN, HEADS, HEAD_DIM = 64, 768, 12, 64
FFN, VOCAB, N_CTX = 3072, 50257, 1024

Shape = tuple[int, ...]


def tensor_type(shape: Shape, dtype: str = "float32") -> str:
    """A type as TVM prints it: scalars as the dtype alone, rank 1 as `(64)`."""
    if not shape:
        return dtype
    return f"Tensor[({', '.join(map(str, shape))}), {dtype}]"


def lit(text: str, dtype: str = "float32") -> str:
    """A scalar literal with the annotation the printer attaches to constants."""
    return f"{text} /* ty={dtype} */"


@dataclass(frozen=True, slots=True, eq=False)
class Value:
    """A node of the generated graph; identity is sharing, as in Relay's graph form."""

    kind: str                               # "param", "call", "tuple" or "proj"
    ty: str                                 # printed type
    shape: Shape = ()
    name: str = ""                          # param: `%name`; call: the op
    args: tuple[Value | str, ...] = ()      # nodes, or literal text inlined as is
    attrs: str = ""
    index: int = 0                          # proj: the field


class _GraphText:
    """Collects parameters and nodes, then prints them as TVM's printer does: one
    `%N = ...;` line per non-atomic node, numbered in post-order from the result
    (arguments left to right), the result itself inlined."""

    def __init__(self, seq: int = SEQ, dtype: str = "float32") -> None:
        self.params: list[Value] = []
        self.seq = seq                          # tokens
        self.n_ctx = max(N_CTX, seq)            # positions the model has (wpe, causal bias)
        self.dtype = dtype                      # of activations, weights and float literals

    def param(self, name: str, shape: Shape, dtype: str | None = None) -> Value:
        ty = tensor_type(shape, dtype or self.dtype)
        self.params.append(Value("param", ty, shape, f"%{name}"))
        return self.params[-1]

    def call(self, op: str, args: list[Value | str], shape: Shape, attrs: str = "",
             dtype: str | None = None, ty: str | None = None) -> Value:
        ty = ty or tensor_type(shape, dtype or self.dtype)
        return Value("call", ty, shape, op, tuple(args), attrs)

    def lit(self, text: str) -> str:
        """A float literal written for float32 (`8f`) in the graph's dtype (`8f16`)."""
        if self.dtype == "float32":
            return lit(text)
        return lit(text.removesuffix("f") + "f" + self.dtype.removeprefix("float"), self.dtype)

    def tuple(self, fields: list[Value]) -> Value:
        return Value("tuple", f"({', '.join(f.ty for f in fields)})", (), "", tuple(fields))

    def proj(self, tup: Value, index: int, shape: Shape) -> Value:
        return Value("proj", tensor_type(shape, self.dtype), shape, "", (tup,), index=index)

    def render(self, result: Value) -> tuple[list[str], str]:
        """(binding lines, text of the result) by an explicit-stack post-order walk."""
        refs: dict[int, str] = {id(p): p.name for p in self.params}
        lines: list[str] = []
        stack: list[tuple[Value, bool]] = [(result, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in refs:
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((a, False) for a in reversed(node.args) if isinstance(a, Value))
                continue
            text = _node_text(node, refs)
            if node is result:
                return lines, text
            refs[id(node)] = f"%{len(lines)}"
            lines.append(f"  %{len(lines)} = {text} /* ty={node.ty} */;")
        raise AssertionError("result not reached")


def _node_text(node: Value, refs: dict[int, str]) -> str:
    args = [refs[id(a)] if isinstance(a, Value) else a for a in node.args]
    if node.kind == "proj":
        return f"{args[0]}.{node.index}"
    if node.kind == "tuple":
        return f"({', '.join(args)})"
    return f"{node.name}({', '.join(args + [node.attrs] if node.attrs else args)})"


def _newshape(shape: Shape) -> str:
    return f"newshape=[{', '.join(map(str, shape))}]"


def _conv1d(g: _GraphText, x: Value, prefix: str, n_in: int, n_out: int) -> Value:
    """HuggingFace Conv1D (`addmm` over the flattened input), as the frontend emits it."""
    w = g.param(f"{prefix}_weight", (n_in, n_out))
    b = g.param(f"{prefix}_bias", (n_out,))
    flat = g.call("reshape", [x], (g.seq, n_in), _newshape((-1, n_in)))
    wt = g.call("transpose", [w], (n_out, n_in), "axes=[1, 0]")
    dense = g.call("nn.dense", [flat, wt], (g.seq, n_out), f"units={n_out}")
    biased = g.call("add", [dense, b], (g.seq, n_out))
    return g.call("reshape", [biased], (1, g.seq, n_out), _newshape((1, g.seq, n_out)))


def _matmul4(g: _GraphText, a: Value, b: Value) -> Value:
    """A 4-d `torch.matmul`: fold batch dims, transpose b, nn.batch_matmul, unfold."""
    a3 = g.call("reshape", [a], (HEADS, a.shape[2], a.shape[3]),
                _newshape((-1, a.shape[2], a.shape[3])))
    b3 = g.call("reshape", [b], (HEADS, b.shape[2], b.shape[3]),
                _newshape((-1, b.shape[2], b.shape[3])))
    bt = g.call("transpose", [b3], (HEADS, b.shape[3], b.shape[2]), "axes=[0, 2, 1]")
    # torch.matmul is a @ b = batch_matmul(a, bt, transpose_b=True). The default 64-token
    # text has always left the attribute out (BatchMatmulAttrs' default is False), which
    # type-checks only while seq == HEAD_DIM; kept so for the parse/typecheck figures.
    attrs = "" if g.seq == HEAD_DIM else "transpose_a=False, transpose_b=True"
    mm = g.call("nn.batch_matmul", [a3, bt], (HEADS, a.shape[2], b.shape[3]), attrs)
    out = (1, HEADS, a.shape[2], b.shape[3])
    return g.call("reshape", [mm], out, _newshape(out))


def _dropout(g: _GraphText, x: Value) -> Value:
    pair = g.call("nn.dropout", [x], (), "rate=0.1f", ty=f"({x.ty}, {x.ty})")
    return g.proj(pair, 0, x.shape)


def _split_heads(g: _GraphText, qkv: Value) -> tuple[Value, Value, Value]:
    third = (1, g.seq, HIDDEN)
    parts = g.call("split", [qkv], (), "indices_or_sections=3, axis=2",
                   ty=f"({', '.join([tensor_type(third, g.dtype)] * 3)})")
    heads = []
    for i, axes in enumerate(((0, 2, 1, 3), (0, 2, 3, 1), (0, 2, 1, 3))):
        part = g.proj(parts, i, third)
        split = g.call("reshape", [part], (1, g.seq, HEADS, HEAD_DIM),
                       _newshape((1, g.seq, HEADS, HEAD_DIM)))
        shape = tuple(split.shape[a] for a in axes)
        heads.append(g.call("transpose", [split], shape, f"axes=[{', '.join(map(str, axes))}]"))
    return heads[0], heads[1], heads[2]


def _attention(g: _GraphText, x: Value, mask: Value, i: int) -> tuple[Value, Value]:
    """GPT2Attention: returns (output, present) where present stacks key and value."""
    p = f"h_{i}_attn"
    q, kt, v = _split_heads(g, _conv1d(g, x, f"{p}_c_attn", HIDDEN, 3 * HIDDEN))
    scores = _matmul4(g, q, kt)
    scaled = g.call("divide", [scores, g.lit("8f")], scores.shape)
    bias = g.param(f"{p}_bias", (1, 1, g.n_ctx, g.n_ctx), "uint8")
    causal = g.call("strided_slice", [bias], (1, 1, g.seq, g.seq),
                    f"begin=[0, 0, 0, 0], end=[1, 1, {g.seq}, {g.seq}], strides=[1], axes=None",
                    "uint8")
    allowed = g.call("cast", [causal], causal.shape, 'dtype="bool"', "bool")
    masked = g.call("where", [allowed, scaled, g.lit("-10000f")], scores.shape)
    # axis=-1 is the default, which the printer leaves out
    probs = g.call("nn.softmax", [g.call("add", [masked, mask], scores.shape)], scores.shape)
    ctx = _matmul4(g, _dropout(g, probs), v)
    merged = g.call("transpose", [ctx], (1, g.seq, HEADS, HEAD_DIM), "axes=[0, 2, 1, 3]")
    merged = g.call("reshape", [merged], (1, g.seq, HIDDEN), _newshape((1, g.seq, HIDDEN)))
    out = _conv1d(g, merged, f"{p}_c_proj", HIDDEN, HIDDEN)
    key = g.call("transpose", [kt], (1, HEADS, g.seq, HEAD_DIM), "axes=[0, 1, 3, 2]")
    present = g.call("stack", [g.tuple([key, v])], (2,) + key.shape)
    return out, present


def _layer_norm_spelled(g: _GraphText, x: Value, prefix: str) -> Value:
    """Layer norm as ONNX exporters write it (mean, variance, `1e-05f`), not nn.layer_norm."""
    gamma = g.param(f"{prefix}_weight", (HIDDEN,))
    beta = g.param(f"{prefix}_bias", (HIDDEN,))
    red = (1, g.seq, 1)
    mean = g.call("mean", [x], red, "axis=[-1], keepdims=True")
    centred = g.call("subtract", [x, mean], x.shape)
    sq = g.call("power", [centred, g.lit("2f")], x.shape)
    var = g.call("mean", [sq], red, "axis=[-1], keepdims=True")
    std = g.call("sqrt", [g.call("add", [var, g.lit("1e-05f")], red)], red)
    normed = g.call("divide", [centred, std], x.shape)
    return g.call("add", [g.call("multiply", [normed, gamma], x.shape), beta], x.shape)


def _gelu_new(g: _GraphText, x: Value) -> Value:
    half = g.call("multiply", [x, g.lit("0.5f")], x.shape)
    cube = g.call("power", [x, g.lit("3f")], x.shape)
    inner = g.call("add", [x, g.call("multiply", [cube, g.lit("0.044715f")], x.shape)], x.shape)
    th = g.call("tanh", [g.call("multiply", [inner, g.lit("0.797885f")], x.shape)], x.shape)
    return g.call("multiply", [half, g.call("add", [th, g.lit("1f")], x.shape)], x.shape)


def _block(g: _GraphText, x: Value, mask: Value, i: int) -> tuple[Value, Value]:
    gamma = g.param(f"h_{i}_ln_1_weight", (HIDDEN,))
    beta = g.param(f"h_{i}_ln_1_bias", (HIDDEN,))
    ln1 = g.call("nn.layer_norm", [x, gamma, beta], x.shape)
    attn, present = _attention(g, ln1, mask, i)
    x = g.call("add", [attn, x], x.shape)
    ln2 = _layer_norm_spelled(g, x, f"h_{i}_ln_2")
    hidden = _gelu_new(g, _conv1d(g, ln2, f"h_{i}_mlp_c_fc", HIDDEN, FFN))
    mlp = _dropout(g, _conv1d(g, hidden, f"h_{i}_mlp_c_proj", FFN, HIDDEN))
    return g.call("add", [x, mlp], x.shape), present


def _embeddings(g: _GraphText) -> tuple[Value, Value, Value]:
    """Token plus position embeddings, the additive attention mask, and `%wte`."""
    ids = g.param("input_ids", (1, g.seq), "int64")
    positions = g.param("position_ids", (1, g.seq), "int64")
    attention_mask = g.param("attention_mask", (1, g.seq), "int64")
    wte = g.param("wte", (VOCAB, HIDDEN))
    wpe = g.param("wpe", (g.n_ctx, HIDDEN))
    flat_ids = g.call("reshape", [ids], (1, g.seq), _newshape((-1, g.seq)), "int64")
    tok = g.call("take", [wte, flat_ids], (1, g.seq, HIDDEN), "axis=0")
    pos = g.call("take", [wpe, positions], (1, g.seq, HIDDEN), "axis=0")
    h = g.call("add", [tok, pos], tok.shape)
    m = g.call("reshape", [attention_mask], (1, 1, 1, g.seq), _newshape((1, 1, 1, g.seq)), "int64")
    m = g.call("cast", [m], m.shape, f'dtype="{g.dtype}"')
    m = g.call("subtract", [g.lit("1f"), m], m.shape)
    return h, g.call("multiply", [m, g.lit("-10000f")], m.shape), wte


def gpt2_module_text(layers: int = 12, scale: int = 1, seq: int = SEQ,
                     dtype: str = "float32") -> str:
    """A GPT-2 module of `layers * scale` blocks as TVM printed it (about 930 lines at 12),
    on `seq` tokens (the position table grows past 1024 when needed), in `dtype` (float32
    or float16: weights, activations, literals; ids and masks keep theirs)."""
    g = _GraphText(seq, dtype)
    h, mask, wte = _embeddings(g)
    presents = []
    for i in range(layers * scale):
        h, present = _block(g, h, mask, i)
        presents.append(present)
    gamma = g.param("ln_f_weight", (HIDDEN,))
    beta = g.param("ln_f_bias", (HIDDEN,))
    h = g.call("nn.layer_norm", [h, gamma, beta], h.shape)
    flat = g.call("reshape", [h], (g.seq, HIDDEN), _newshape((-1, HIDDEN)))
    logits = g.call("nn.dense", [flat, wte], (g.seq, VOCAB), f"units={VOCAB}")
    logits = g.call("reshape", [logits], (1, g.seq, VOCAB), _newshape((1, g.seq, VOCAB)))
    result = g.tuple([logits] + presents)
    lines, result_text = g.render(result)
    params = ", ".join(f"{p.name}: {p.ty} /* ty={p.ty} */" for p in g.params)
    head = f"def @main({params}) -> {result.ty} {{"
    tail = f"  {result_text} /* ty={result.ty} */"
    return "\n".join(['#[version = "0.0.5"]', head, *lines, tail, "}", ""])


def count_bindings(text: str) -> int:
    """Graph bindings (`%N = ...;` lines): the operations of a module in graph form."""
    return len(re.findall(r"^\s*%\d+ = ", text, re.MULTILINE))


def count_params(text: str) -> int:
    """Parameters of the first `def` (the header is one line in printed text)."""
    header = next(line for line in text.splitlines() if line.startswith("def "))
    header = re.sub(r"/\*.*?\*/", "", header)
    return len(re.findall(r"%[A-Za-z_][A-Za-z0-9_/]*\s*:", header))


def count_lines(text: str) -> int:
    return len(text.splitlines())


# --- Relay tokens (LANGUAGE.md §2) -------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<directive>\#\[[^\]]*\])
  | (?P<meta>meta\[[^\]]*\]\[[0-9]+\])
  | (?P<sigiled>[%@](?:[0-9]+|[A-Za-z_][A-Za-z0-9_/]*))
  | (?P<number>-*(?:inff|[0-9][0-9.eE+-]*(?:[if][0-9.eE+-]*)?))
  | (?P<string>"[^"]*")
  | (?P<ident>match\?|[A-Za-z_][A-Za-z0-9_/]*)
  | (?P<op2>->|=>|<=|>=|==|!=)
  | (?P<punct>[()\[\]{},.;:=+\-*/<>!?])
""", re.VERBOSE)


def _skip_block_comment(text: str, pos: int) -> int:
    """Index just past the `*/` matching the `/*` at `pos`; block comments nest (§2.2)."""
    depth, i = 0, pos
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return i


def count_tokens(text: str) -> int:
    """Lexical tokens of Relay text; whitespace and comments are not tokens.

    A `#[metadata]` directive ends the Relay text (the rest is JSON, §2.9); a
    dotted name such as `nn.dense` is three tokens, as in TVM's lexer.
    """
    count, pos = 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"no Relay token at offset {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind == "block_comment":
            pos = _skip_block_comment(text, pos)
            continue
        pos = m.end()
        if kind in ("ws", "line_comment"):
            continue
        count += 1
        if kind == "directive" and m.group().replace(" ", "") == "#[metadata]":
            break
    return count


# --- MLIR of the same size, for xDSL -----------------------------------------------------------

_T = "tensor<1x64x768xf32>"
_T2 = "tensor<64x768xf32>"
_FM = "<{fastmath = #arith.fastmath<none>}>"      # on the mulf ops only


def _mlir_op(k: int, prev: str, other: str, arg: str) -> tuple[str, str]:
    """The k-th op of a repeating GPT-2-like mix: (op text after `= `, its result type).

    Half the kinds carry properties (reshapes, slice, constant, fastmath), about
    the share of GPT-2's Relay calls that carry attributes."""
    binary = f"({_T}, {_T}) -> {_T}"
    kinds = [
        (f'"arith.addf"({prev}, {arg}) : {binary}', _T),
        (f'"tensor.collapse_shape"({prev}) <{{reassociation = [[0 : i64, 1 : i64], [2 : i64]]}}>'
         f" : ({_T}) -> {_T2}", _T2),
        (f'"tensor.expand_shape"({prev}) <{{reassociation = [[0 : i64, 1 : i64], [2 : i64]], '
         f"static_output_shape = array<i64: 1, 64, 768>}}> : ({_T2}) -> {_T}", _T),
        (f'"arith.mulf"({prev}, {other}) {_FM} : {binary}', _T),
        (f'"arith.constant"() <{{value = dense<5.000000e-01> : {_T}}}> : () -> {_T}', _T),
        (f'"arith.mulf"({other}, {prev}) {_FM} : {binary}', _T),
        (f'"math.powf"({prev}, {other}) : {binary}', _T),
        (f'"math.tanh"({prev}) : ({_T}) -> {_T}', _T),
        (f'"arith.subf"({prev}, {arg}) : {binary}', _T),
        (f'"arith.divf"({prev}, {other}) : {binary}', _T),
        (f'"tensor.extract_slice"({prev}) <{{static_offsets = array<i64: 0, 0, 0>, '
         "static_sizes = array<i64: 1, 64, 768>, static_strides = array<i64: 1, 1, 1>, "
         f"operandSegmentSizes = array<i32: 1, 0, 0, 0>}}> : ({_T}) -> {_T}", _T),
        (f'"math.sqrt"({prev}) : ({_T}) -> {_T}', _T),
    ]
    return kinds[k % len(kinds)]


def mlir_module_text(num_ops: int, num_args: int | None = None) -> str:
    """A generic-form MLIR module: one `func.func` whose body holds exactly `num_ops`
    operations (plus `func.return`) on tensor types, using dialects xDSL ships
    (func, arith, math, tensor). `num_args` block arguments stand for the weights."""
    num_args = max(2, num_ops // 6 if num_args is None else num_args)
    args = [f"%arg{i}" for i in range(num_args)]
    sig = ", ".join([_T] * num_args)
    lines = ['"builtin.module"() ({',
             f'  "func.func"() <{{sym_name = "main", function_type = ({sig}) -> {_T}}}> ({{',
             f"  ^bb0({', '.join(f'{a}: {_T}' for a in args)}):"]
    full = [args[0], args[1]]      # values of type _T, most recent last
    prev = args[0]
    for i in range(num_ops):
        op, ty = _mlir_op(i, prev, full[-2], args[i % num_args])
        lines.append(f"    %{i} = {op}")
        prev = f"%{i}"
        if ty == _T:
            full.append(prev)
    lines += [f'    "func.return"({full[-1]}) : ({_T}) -> ()', "  }) : () -> ()",
              "}) : () -> ()", ""]
    return "\n".join(lines)
