"""Training a model written in Relay: its loss differentiated by `rl.transform.gradient`,
the optimiser's update added in Relay, built with the LLVM backend, run over minibatches.

A training module (examples/train_mlp.relay) has two functions:

* `@main(%x, %y, weights...)`: the loss, a float scalar. `%x` is a minibatch of inputs
  (its first dimension the batch size B), `%y` their labels: class indices (B) of an
  integer dtype or one-hot rows (B, classes) of a float dtype. Every other parameter
  is a weight to train (a float tensor of static shape).
* `@predict(inputs, weights...)`: the class scores (B, classes) of a minibatch; its
  parameters take the minibatch of inputs and then `@main`'s weights, in `@main`'s
  order (of the same types; the names may differ). Test accuracy is its argmax.

`training_problem(mod)` checks these conventions (a located diagnostic for each
broken one). `Trainer(problem, optimizer="adam")` builds the training step: the
globals `@main` calls are inlined, `@main` differentiated in first-order mode (a loss
with control flow left after inlining -- `if`, `match`, closures, recursion -- in
higher-order mode, simplified by PartialEvaluate, EliminateDeadReferences and
DeadCodeElimination; what stays dynamic then runs in mixed mode), and one function
made of the gradient and the update

    step(%x, %y, weights..., state..., hyper...) -> (loss, new weights..., new state...)

so a training step is one call of one native function (no NumPy between the gradient
and the update, no gradient of %x or %y computed). The update is Relay, not NumPy
around the gradient, for that reason: per step the Python work is gathering the
minibatch and swapping the returned arrays in. Adam's bias corrections, which
depend on the step number, are two scalar inputs computed on the host:

    m' = b1 m + (1 - b1) g       v' = b2 v + (1 - b2) g*g
    w' = w - (lr / c1) m' / (sqrt(v') / sqrt(c2) + eps)       c_i = 1 - b_i^t

(benchmarks/train_digits_mlp.py's update, rearranged). SGD is `w' = w - lr g`.
`Trainer.fit(data, epochs)` shuffles the training set each epoch (seeded), runs the
whole minibatches (a remainder smaller than B waits for the next epoch's shuffle),
reports progress per step (`relaylang.ir.progress`: `relay train` draws the bar) and
calls `on_epoch` with the mean loss; `accuracy(x, y)` runs `@predict` natively over
the rows, padding the last minibatch.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.module import IRModule
from ..ir.types import TensorType

OPTIMIZERS = ("adam", "sgd")
DEFAULT_LR = {"adam": 0.01, "sgd": 0.1}
ADAM_BETA1, ADAM_BETA2, ADAM_EPS = 0.9, 0.999, 1e-8

__all__ = ["EpochReport", "Trainer", "TrainingProblem", "training_problem"]


# ---------------------------------------------------------------- the conventions


@dataclass(frozen=True)
class TrainingProblem:
    """A checked training module: what `Trainer` needs to know of it."""
    mod: IRModule                      # the module as given (typed)
    entry: str                         # the loss function's name
    predict: str                       # the scores function's name
    inputs: str                        # the parameter holding the minibatch of inputs
    labels: str                        # the parameter holding its labels
    batch: int
    input_shape: tuple[int, ...]       # of one minibatch, (B, ...)
    input_dtype: str
    label_shape: tuple[int, ...]       # (B) indices or (B, classes) one-hot rows
    label_dtype: str
    classes: int
    weights: tuple[tuple[str, tuple[int, ...], str], ...]      # @main's, in order

    @property
    def one_hot(self) -> bool:
        return len(self.label_shape) == 2


def _static(ty: Any) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype) of a tensor type of static shape, else None."""
    if not isinstance(ty, TensorType):
        return None
    if not all(isinstance(d, int) for d in ty.shape):
        return None
    return tuple(int(d) for d in ty.shape), str(ty.dtype)


def _show(ty: Any) -> str:
    from ..ir.text import astext
    try:
        return astext(ty)
    except Exception:  # noqa: BLE001 -- a type without a printer: its repr
        return repr(ty)


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _param_type(p: Any) -> Any:
    return p.checked_type if p.checked_type is not None else p.type_annotation


def training_problem(mod: IRModule, entry: str = "main", predict: str = "predict",
                     inputs: str = "x", labels: str = "y") -> TrainingProblem:
    """Check that `mod` is a training module (the module docstring's conventions); a
    `DiagnosticError` located at what is wrong otherwise (type errors included)."""
    from ..ir.diagnostics import Severity
    from ..typing import check_module
    typed, diagnostics = check_module(mod)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise DiagnosticError(diagnostics, mod.sources)
    errors: list[Diagnostic] = []

    def fail(message: str, span: Any) -> DiagnosticError:
        return DiagnosticError([Diagnostic.error(message, span)], mod.sources)

    names = ", ".join("@" + gv.name_hint for gv in typed.functions) or "none"
    if entry not in typed:
        raise fail(f"the module has no function @{entry} (the loss to minimise; functions: "
                   f"{names})", None)
    loss_fn = typed[entry]
    params = {p.name_hint: p for p in loss_fn.params}
    listed = ", ".join("%" + p.name_hint for p in loss_fn.params) or "none"
    for name, role in ((inputs, "a minibatch of inputs"), (labels, "their labels")):
        if name not in params:
            raise fail(f"@{entry} has no parameter %{name} ({role}); its parameters: "
                       f"{listed}", loss_fn.span)
    ret = _static(loss_fn.body.checked_type) if loss_fn.body.checked_type is not None \
        else None
    if ret is None or ret[0] != () or not _is_float(ret[1]):
        raise fail(f"@{entry} must return the loss, a float scalar; it returns "
                   f"{_show(loss_fn.body.checked_type)}", loss_fn.span)
    x_param, y_param = params[inputs], params[labels]
    x_static = _static(_param_type(x_param))
    if x_static is None or not x_static[0]:
        raise fail(f"%{inputs} must be a tensor of static shape (B, ...) with the batch "
                   f"size first, not {_show(_param_type(x_param))}", x_param.span)
    batch = x_static[0][0]
    y_static = _static(_param_type(y_param))
    if y_static is None or not (
            (len(y_static[0]) == 1 and not _is_float(y_static[1])
             and y_static[1] != "bool")
            or (len(y_static[0]) == 2 and _is_float(y_static[1]))) \
            or y_static[0][0] != batch:
        raise fail(f"%{labels} must hold the labels of the minibatch: class indices "
                   f"Tensor[({batch}), int64] or one-hot rows Tensor[({batch}, classes), "
                   f"float32], not {_show(_param_type(y_param))}", y_param.span)
    weights = []
    for p in loss_fn.params:
        if p.name_hint in (inputs, labels):
            continue
        st = _static(_param_type(p))
        if st is None or not _is_float(st[1]):
            errors.append(Diagnostic.error(
                f"%{p.name_hint} of @{entry} is trained, so it must be a float tensor of "
                f"static shape, not {_show(_param_type(p))}", p.span))
            continue
        weights.append((p.name_hint, st[0], st[1]))
    if errors:
        raise DiagnosticError(errors, mod.sources)
    if predict not in typed:
        raise fail(f"the module has no function @{predict} (the class scores of a "
                   f"minibatch; functions: {names})", None)
    pred_fn = typed[predict]
    want_params = [x_param] + [params[name] for name, _, _ in weights]
    shown = ", ".join("%" + q.name_hint for q in want_params)
    if len(pred_fn.params) != len(want_params):
        raise fail(f"@{predict} must take the minibatch of inputs and then @{entry}'s "
                   f"weights in its order, like ({shown}): {len(want_params)} parameters, "
                   f"not {len(pred_fn.params)}", pred_fn.span)
    for got_p, want_p in zip(pred_fn.params, want_params):
        want, got = _param_type(want_p), _param_type(got_p)
        if _static(want) != _static(got):
            raise fail(f"%{got_p.name_hint} of @{predict} is {_show(got)} but it takes "
                       f"%{want_p.name_hint} of @{entry}, {_show(want)}", got_p.span)
    scores = _static(pred_fn.body.checked_type)
    if scores is None or len(scores[0]) != 2 or scores[0][0] != batch \
            or not _is_float(scores[1]):
        raise fail(f"@{predict} must return the class scores Tensor[({batch}, classes), "
                   f"float], not {_show(pred_fn.body.checked_type)}", pred_fn.span)
    classes = scores[0][1]
    if len(y_static[0]) == 2 and y_static[0][1] != classes:
        raise fail(f"%{labels} has {y_static[0][1]} classes per row but @{predict} scores "
                   f"{classes}", y_param.span)
    return TrainingProblem(
        mod=typed, entry=entry, predict=predict, inputs=inputs, labels=labels, batch=batch,
        input_shape=x_static[0], input_dtype=x_static[1], label_shape=y_static[0],
        label_dtype=y_static[1], classes=classes, weights=tuple(weights))


def check_data(problem: TrainingProblem, x: Any, y: Any, what: str = "training") -> None:
    """A `DiagnosticError` at %inputs when rows of `x` do not fit it, or at %labels when a
    label of `y` is not a class of @predict."""
    import numpy as np
    loss_fn = problem.mod[problem.entry]
    params = {p.name_hint: p for p in loss_fn.params}
    row = problem.input_shape[1:]
    if tuple(x.shape[1:]) != row:
        raise DiagnosticError([Diagnostic.error(
            f"the {what} inputs are rows of shape {tuple(x.shape[1:])} but %{problem.inputs} "
            f"takes rows of shape {row}", params[problem.inputs].span)],
            problem.mod.sources)
    if len(y) and (int(np.min(y)) < 0 or int(np.max(y)) >= problem.classes):
        raise DiagnosticError([Diagnostic.error(
            f"the {what} labels run from {int(np.min(y))} to {int(np.max(y))} but "
            f"@{problem.predict} scores {problem.classes} classes",
            params[problem.labels].span)], problem.mod.sources)
    if len(x) < problem.batch and what == "training":
        raise DiagnosticError([Diagnostic.error(
            f"the training set has {len(x)} rows, fewer than one minibatch "
            f"({problem.batch})", params[problem.inputs].span)], problem.mod.sources)


# ---------------------------------------------------------------- the training step


def _inline_globals(mod: IRModule) -> IRModule:
    """`mod` with every global marked `Inline=1` and inlined (recursive ones stay)."""
    from ..ir.attrs import DictAttrs
    from ..ir.expr import Function
    from ..transform.inline import Inline
    marked = IRModule(dict(mod.functions), mod.type_definitions, mod.source_name,
                      mod.sources)
    for gv, fn in list(marked.functions.items()):
        if not isinstance(fn, Function) or (fn.attrs is not None
                                            and fn.attrs.get("Inline", 0)):
            continue
        entries = tuple(fn.attrs.entries) if fn.attrs is not None else ()
        attrs = DictAttrs(entries=entries + (("Inline", 1),))
        marked.functions[gv] = Function(fn.params, fn.body, fn.ret_type, fn.type_params,
                                        attrs, span=fn.span)
    return Inline()(marked)


def _split_result(body: Any) -> tuple[list[tuple[Any, Any]], Any, list[Any] | None]:
    """The `let`s of `body` in order, its tail, and the gradient expressions when the
    tail is the literal `(result, (grads...))` the first-order pass builds (else None)."""
    from ..ir.expr import Let
    from ..ir.expr import Tuple as TupleNode
    lets = []
    while isinstance(body, Let):
        lets.append((body.var, body.value))
        body = body.body
    if isinstance(body, TupleNode) and len(body.fields) == 2 \
            and isinstance(body.fields[1], TupleNode):
        return lets, body.fields[0], list(body.fields[1].fields)
    return lets, body, None


def _higher_order_gradient(mod: IRModule, entry: str) -> tuple[Any, dict[Any, Any]]:
    """The gradient of a loss with control flow (`if`, `match`, closures, recursion):
    higher-order mode, then PartialEvaluate, EliminateDeadReferences and
    DeadCodeElimination to run at compile time what can be (the build then runs the
    rest in mixed mode)."""
    from ..ir.expr import GlobalVar
    from ..transform.dead_code_elimination import DeadCodeElimination
    from ..transform.gradient import EliminateDeadReferences, gradient
    from ..transform.infer_type import InferType
    from ..transform.partial_eval.partial_evaluate import PartialEvaluate
    grad_mod = mod.copy()
    grad = gradient(grad_mod[entry], grad_mod, mode="higher_order")
    functions = {gv: fn for gv, fn in grad_mod.functions.items() if gv.name_hint != entry}
    functions[GlobalVar(entry)] = grad
    out = IRModule(functions, grad_mod.type_definitions, grad_mod.source_name,
                   grad_mod.sources)
    out = DeadCodeElimination()(EliminateDeadReferences()(PartialEvaluate()(InferType()(out))))
    return out[entry], {gv: fn for gv, fn in out.functions.items() if gv.name_hint != entry}


def step_function(problem: TrainingProblem, optimizer: str = "adam") -> Any:
    """The Relay function of one training step (module docstring): parameters
    %x, %y, the weights, the optimiser's state (Adam: m_w and v_w per weight), its scalar
    inputs (Adam: %lr_c1 = lr / c1 and %rsqrt_c2 = 1 / sqrt(c2); SGD: %lr); the flat
    result (loss, new weights..., new state...). `step_module` has it as @main with the
    globals it calls."""
    return step_module(problem, optimizer)["main"]


def step_module(problem: TrainingProblem, optimizer: str = "adam") -> IRModule:
    """The module of the training step: @main the step function (`step_function`), beside
    it the globals it calls (the higher-order gradient's `@f_grad` copies, if any)."""
    from ..ir import builder as rl
    from ..op import make
    from ..transform.gradient import gradient
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, "
                         f"not {optimizer!r}")
    mod = _inline_globals(problem.mod)
    helpers: dict[Any, Any] = {}
    try:
        grad = gradient(mod[problem.entry], mod, mode="first_order")
    except DiagnosticError as e:
        if not any(d.code == "not-differentiable" for d in e.diagnostics):
            raise
        grad, helpers = _higher_order_gradient(mod, problem.entry)
    lets, result, grads = _split_result(grad.body)
    if grads is None:                   # not the literal tuple: project the result
        r = rl.var("result")
        lets.append((r, result))
        result, grads = rl.TupleGetItem(r, 0), [
            rl.TupleGetItem(rl.TupleGetItem(r, 1), i) for i in range(len(grad.params))]
    index = {p.name_hint: i for i, p in enumerate(grad.params)}
    weights = [grad.params[index[name]] for name, _, _ in problem.weights]
    wgrads = [grads[index[name]] for name, _, _ in problem.weights]
    dtype = problem.weights[0][2] if problem.weights else "float32"

    def c(v: float) -> Any:
        return rl.const(v, dtype)
    new_w: list[Any] = []
    state_params: list[Any] = []
    new_state: list[Any] = []
    if optimizer == "sgd":
        lr = rl.var("lr", shape=(), dtype=dtype)
        hyper = [lr]
        for w, g in zip(weights, wgrads):
            new_w.append(make.subtract(w, make.multiply(lr, g)))
    else:
        lr_c1 = rl.var("lr_c1", shape=(), dtype=dtype)
        rsqrt_c2 = rl.var("rsqrt_c2", shape=(), dtype=dtype)
        hyper = [lr_c1, rsqrt_c2]
        ms = [rl.var(f"m_{name}", shape=shape, dtype=dt) for name, shape, dt in problem.weights]
        vs = [rl.var(f"v_{name}", shape=shape, dtype=dt) for name, shape, dt in problem.weights]
        new_m, new_v = [], []
        for w, g, m, v in zip(weights, wgrads, ms, vs):
            m2 = make.add(make.multiply(c(ADAM_BETA1), m), make.multiply(c(1 - ADAM_BETA1), g))
            v2 = make.add(make.multiply(c(ADAM_BETA2), v),
                          make.multiply(c(1 - ADAM_BETA2), make.multiply(g, g)))
            denom = make.add(make.multiply(make.sqrt(v2), rsqrt_c2), c(ADAM_EPS))
            new_w.append(make.subtract(w, make.divide(make.multiply(lr_c1, m2), denom)))
            new_m.append(m2)
            new_v.append(v2)
        state_params, new_state = ms + vs, new_m + new_v
    body: Any = rl.Tuple([result, *new_w, *new_state])
    for var, value in reversed(lets):
        body = rl.Let(var, value, body)
    step = rl.Function([*grad.params, *state_params, *hyper], body)
    return IRModule.from_expr(step, functions=helpers)


def optimize_step(mod: IRModule) -> IRModule:
    """`step_module`'s module typed and rid of what nothing uses (the gradients of %x
    and %y): DeadCodeElimination, then FoldConstant; `rl.build` runs -O3 on it."""
    from ..transform.dead_code_elimination import DeadCodeElimination
    from ..transform.fold_constant import FoldConstant
    from ..transform.infer_type import InferType
    return FoldConstant()(DeadCodeElimination()(InferType()(mod)))


# ---------------------------------------------------------------- the trainer


@dataclass
class EpochReport:
    epoch: int              # 1-based
    loss: float             # mean loss over the epoch's steps
    seconds: float          # wall time of the epoch's steps
    steps: int


@dataclass
class Trainer:
    """Trains `problem`'s weights (see the module docstring). `params`: starting weights
    by name (default He-uniform for tensors of rank >= 2, zeros otherwise, from `seed`)."""
    problem: TrainingProblem
    optimizer: str = "adam"
    lr: float | None = None
    seed: int = 0
    params: Mapping[str, Any] | None = None
    history: list[EpochReport] = field(default_factory=list)

    def __post_init__(self) -> None:
        import numpy as np

        from ..backend.build import build
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, "
                             f"not {self.optimizer!r}")
        if self.lr is None:
            self.lr = DEFAULT_LR[self.optimizer]
        self.rng = np.random.default_rng(self.seed)
        self.weights = self._initial_weights(self.params)
        self.state = [np.zeros(shape, dt) for _ in range(2) for _, shape, dt in
                      self.problem.weights] if self.optimizer == "adam" else []
        self.t = 0
        start = time.perf_counter()
        self.step_module = optimize_step(step_module(self.problem, self.optimizer))
        self.step_lib = build(self.step_module, target="llvm")
        self.build_seconds = time.perf_counter() - start
        self._predict_lib: Any = None
        p = self.problem
        loss_params = [q.name_hint for q in p.mod[p.entry].params]
        self._slots = {name: i for i, name in enumerate(loss_params)}

    def _initial_weights(self, given: Mapping[str, Any] | None) -> list[Any]:
        import numpy as np
        out = []
        for name, shape, dtype in self.problem.weights:
            if given is not None and name in given:
                a = np.asarray(given[name])
                if a.shape != shape:
                    raise ValueError(f"the starting value of %{name} has shape {a.shape}, "
                                     f"not {shape}")
                out.append(np.ascontiguousarray(a, dtype=dtype))
                continue
            if len(shape) >= 2:
                fan_in = int(np.prod(shape[1:]))
                bound = np.sqrt(6.0 / fan_in)
                out.append(self.rng.uniform(-bound, bound, size=shape).astype(dtype))
            else:
                out.append(np.zeros(shape, dtype))
        return out

    @property
    def weight_dict(self) -> dict[str, Any]:
        return {name: w for (name, _, _), w in zip(self.problem.weights, self.weights)}

    def _labels(self, y: Any) -> Any:
        import numpy as np
        p = self.problem
        if p.one_hot:
            return np.eye(p.classes, dtype=p.label_dtype)[y]
        return y.astype(p.label_dtype)

    def _hyper(self) -> list[Any]:
        import numpy as np
        dt = self.problem.weights[0][2] if self.problem.weights else "float32"
        lr = float(self.lr)   # type: ignore[arg-type]
        if self.optimizer == "sgd":
            return [np.asarray(lr, dt)]
        c1 = 1.0 - ADAM_BETA1 ** self.t
        c2 = 1.0 - ADAM_BETA2 ** self.t
        return [np.asarray(lr / c1, dt), np.asarray(1.0 / np.sqrt(c2), dt)]

    def step(self, x: Any, y: Any) -> float:
        """One step on the minibatch `x` (B, ...) with labels `y` already in %y's form;
        the weights and optimiser state are replaced; the loss before the update."""
        self.t += 1
        args = [None] * len(self._slots)
        args[self._slots[self.problem.inputs]] = x
        args[self._slots[self.problem.labels]] = y
        k = 0
        for i, a in enumerate(args):
            if a is None:
                args[i] = self.weights[k]
                k += 1
        out = self.step_lib(*args, *self.state, *self._hyper())
        n = len(self.weights)
        self.weights = list(out[1:1 + n])
        self.state = list(out[1 + n:])
        return float(out[0])

    def epoch(self, x: Any, y: Any, bar: Any = None, order: Any = None) -> float:
        """One pass over (x, y) in a fresh shuffled order (`order`: this permutation of
        the rows instead), whole minibatches only; the mean loss. `bar`: a
        `relaylang.ir.progress` task advanced once per step."""
        import numpy as np
        p = self.problem
        b = p.batch
        x = np.ascontiguousarray(x, dtype=p.input_dtype)
        labels = self._labels(np.asarray(y))
        if order is None:
            order = self.rng.permutation(len(x))
        steps = len(x) // b
        total = 0.0
        for s in range(steps):
            idx = order[s * b:(s + 1) * b]
            total += self.step(x[idx], labels[idx])
            if bar is not None:
                bar.update(1)
        return total / max(steps, 1)

    def fit(self, x: Any, y: Any, epochs: int,
            on_epoch: Callable[[EpochReport], None] | None = None) -> list[EpochReport]:
        """`epochs` epochs on (x, y); `on_epoch(report)` after each. Progress: one task
        over all the steps (`relay train` draws it as a bar), its note the last epoch's
        loss."""
        from ..ir import progress
        check_data(self.problem, x, y)
        steps = len(x) // self.problem.batch
        first = len(self.history) + 1
        with progress.begin("training", total=steps * epochs, unit="step") as bar:
            for _ in range(epochs):
                start = time.perf_counter()
                loss = self.epoch(x, y, bar)
                report = EpochReport(len(self.history) + 1, loss,
                                     time.perf_counter() - start, steps)
                self.history.append(report)
                bar.update(0, note=f"epoch {report.epoch}/{first + epochs - 1} "
                                   f"loss {loss:.4f}")
                if on_epoch is not None:
                    on_epoch(report)
        return self.history

    def predict(self, x: Any) -> Any:
        """@predict's scores for every row of `x` (minibatches of B, the last padded)."""
        import numpy as np

        from ..backend.build import build
        from ..ir.expr import GlobalVar
        p = self.problem
        if self._predict_lib is None:
            functions = {gv: fn for gv, fn in p.mod.functions.items()
                         if gv.name_hint not in (p.entry, "main")}
            functions[GlobalVar("main")] = p.mod[p.predict]
            pmod = IRModule(functions, p.mod.type_definitions, p.mod.source_name,
                            p.mod.sources)
            self._predict_lib = build(pmod, target="llvm")
        x = np.ascontiguousarray(x, dtype=p.input_dtype)
        b = p.batch
        rows = len(x)
        padded = -(-rows // b) * b
        if padded != rows:
            x = np.concatenate([x, np.zeros((padded - rows, *x.shape[1:]), x.dtype)])
        out = []
        for s in range(0, padded, b):
            out.append(np.asarray(self._predict_lib(x[s:s + b], *self.weights)))
        return np.concatenate(out)[:rows]

    def accuracy(self, x: Any, y: Any) -> float:
        import numpy as np
        check_data(self.problem, x, y, what="test")
        if len(x) == 0:
            return float("nan")
        return float((self.predict(x).argmax(axis=1) == np.asarray(y)).mean())


def train(mod: IRModule, data: Any, epochs: int, *, optimizer: str = "adam",
          lr: float | None = None, seed: int = 0, params: Mapping[str, Any] | None = None,
          on_epoch: Callable[[EpochReport], None] | None = None,
          **names: str) -> tuple[Trainer, float]:
    """Train the training module `mod` on `data` (a `DataSet`) for `epochs` epochs; the
    trainer and the test accuracy. `names`: entry, predict, inputs, labels."""
    problem = training_problem(mod, **names)
    check_data(problem, data.x_train, data.y_train)
    check_data(problem, data.x_test, data.y_test, what="test")
    trainer = Trainer(problem, optimizer=optimizer, lr=lr, seed=seed, params=params)
    trainer.fit(data.x_train, data.y_train, epochs, on_epoch=on_epoch)
    return trainer, trainer.accuracy(data.x_test, data.y_test)
