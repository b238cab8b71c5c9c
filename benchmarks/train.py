"""Time per epoch of training examples/train_mlp.relay on the LLVM backend against the same
training loop in PyTorch (CPU), issue 20's target: <= 1.5x PyTorch per epoch.

    flock /tmp/bench.lock python benchmarks/train.py                 # 15 rounds, 1 thread
    python benchmarks/train.py --rounds 31 --threads 2 --json
    python benchmarks/train.py --profile        # also rl.profile of one training step

Both loops train the same network (examples/train_mlp.relay: 64 -> 64 -> 10, ReLU, softmax
cross-entropy) from the same starting weights (the relaylang trainer's He-uniform draw,
copied into torch), with Adam (lr 0.01, betas 0.9/0.999, eps 1e-8), minibatches of 32
in the same shuffled order: an epoch is 40 steps over the first 1,280 of the 1,300
training digits of sklearn.datasets.load_digits (the rest waits for the next shuffle).

* relaylang: `relaylang.training.Trainer.epoch`: per step, gather the minibatch (NumPy
  fancy indexing) and make one call of the built step function (gradient from
  rl.transform.gradient and the Adam update, one native function), then swap the
  returned weights and moments in.
* PyTorch: `nn.Sequential(Linear, ReLU, Linear)`, `nn.CrossEntropyLoss`,
  `torch.optim.Adam` (its default implementation for CPU tensors); per step gather the
  minibatch (tensor indexing), `zero_grad(set_to_none=True)`, forward, `backward()`,
  `step()`.

Rounds interleave the two (one epoch each, the order alternating per round) after two
warm-up epochs each; the table gives medians and quartiles in ms and the ratio of the
medians (relaylang / PyTorch). Both run on `--threads` threads (`torch.set_num_threads`,
`RELAY_NUM_THREADS`). The run ends with both models' losses of the last epoch and test
accuracy (they should agree closely: same weights, same data order) and the machine's
load average (the cores are shared: say it with the figures). torch is in the `bench`
extra (`pip install torch`), never a run-time dependency of relaylang.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXAMPLE = ROOT / "examples" / "train_mlp.relay"
TARGET = 1.5


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def torch_model(trainer, threads: int):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    w = trainer.weight_dict
    hidden = w["w1"].shape[0]
    model = torch.nn.Sequential(torch.nn.Linear(w["w1"].shape[1], hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, w["w2"].shape[0]))
    with torch.no_grad():
        for layer, (wk, bk) in ((model[0], ("w1", "b1")), (model[2], ("w2", "b2"))):
            layer.weight.copy_(torch.from_numpy(np.array(w[wk])))
            layer.bias.copy_(torch.from_numpy(np.array(w[bk])))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    return model, opt


def torch_epoch(model, opt, x, y, order, batch: int) -> float:
    import torch
    loss_fn = torch.nn.functional.cross_entropy
    idx_all = torch.from_numpy(order)
    total = 0.0
    steps = len(order) // batch
    for s in range(steps):
        idx = idx_all[s * batch:(s + 1) * batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        total += loss.item()
    return total / steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="print rl.profile's table of one training step")
    args = ap.parse_args(argv)
    os.environ["RELAY_NUM_THREADS"] = str(args.threads)

    import numpy as np

    import relaylang as rl
    from relaylang.training import Trainer, digits_split, training_problem
    try:
        import torch
    except ImportError:
        print("torch is not installed: pip install torch (the bench extra)", file=sys.stderr)
        return 1
    data = digits_split()
    problem = training_problem(rl.parse(EXAMPLE.read_text(), source_name=EXAMPLE.name))
    start = time.perf_counter()
    trainer = Trainer(problem, seed=args.seed)
    build_s = time.perf_counter() - start
    model, opt = torch_model(trainer, args.threads)
    xt, yt = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    rng = np.random.default_rng(args.seed)
    b = problem.batch

    times: dict[str, list[float]] = {"relaylang": [], "torch": []}
    losses: dict[str, float] = {}

    def run(which: str, order, record: bool) -> None:
        t0 = time.perf_counter()
        if which == "relaylang":
            loss = trainer.epoch(data.x_train, data.y_train, order=order)
        else:
            loss = torch_epoch(model, opt, xt, yt, order, b)
        dt = time.perf_counter() - t0
        losses[which] = loss
        if record:
            times[which].append(dt)

    for r in range(2 + args.rounds):
        order = rng.permutation(len(data.x_train))
        pair = ("relaylang", "torch") if r % 2 == 0 else ("torch", "relaylang")
        for which in pair:
            run(which, order, record=r >= 2)

    steps = len(data.x_train) // b
    with torch.no_grad():
        torch_acc = float((model(torch.from_numpy(data.x_test)).argmax(1).numpy()
                           == data.y_test).mean())
    relay_acc = trainer.accuracy(data.x_test, data.y_test)
    # the step function alone: one native call, no gathering, no Python around it
    x0, y0 = data.x_train[:b], np.eye(problem.classes, dtype="float32")[data.y_train[:b]]
    call_args = [x0, y0, *trainer.weights, *trainer.state, *trainer._hyper()]
    lib = trainer.step_lib
    for _ in range(50):
        lib(*call_args)
    call_times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(200):
            lib(*call_args)
        call_times.append((time.perf_counter() - t0) / 200)
    call_us = statistics.median(call_times) * 1e6

    rq = quartiles(times["relaylang"])
    tq = quartiles(times["torch"])
    ratio = rq[1] / tq[1]
    load = os.getloadavg()
    result = {
        "rounds": args.rounds, "threads": args.threads, "batch": b, "steps_per_epoch": steps,
        "relaylang_ms": [v * 1e3 for v in rq], "torch_ms": [v * 1e3 for v in tq],
        "ratio": ratio, "target": TARGET, "pass": ratio <= TARGET,
        "step_call_us": call_us, "relaylang_step_us": rq[1] / steps * 1e6,
        "torch_step_us": tq[1] / steps * 1e6, "build_s": build_s,
        "last_loss": losses, "test_accuracy": {"relaylang": relay_acc, "torch": torch_acc},
        "torch_version": torch.__version__, "loadavg": load,
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"training examples/train_mlp.relay: {steps} steps of {b} per epoch, Adam, "
              f"{args.threads} thread(s), {args.rounds} interleaved rounds "
              f"(torch {torch.__version__})")
        print(f"{'':12} {'q1 ms':>9} {'median ms':>10} {'q3 ms':>9} {'per step us':>12}")
        for name, q in (("relaylang", rq), ("pytorch", tq)):
            print(f"{name:12} {q[0] * 1e3:9.2f} {q[1] * 1e3:10.2f} {q[2] * 1e3:9.2f} "
                  f"{q[1] / steps * 1e6:12.1f}")
        print(f"ratio relaylang / pytorch per epoch: {ratio:.3f} (target <= {TARGET}: "
              f"{'PASS' if ratio <= TARGET else 'FAIL'})")
        print(f"relaylang: a whole step {rq[1] / steps * 1e6:.1f} us (median epoch / "
              f"{steps}); one call of the step function alone, timed apart, "
              f"{call_us:.1f} us; training step built in {build_s:.2f} s")
        print(f"last epoch's loss: relaylang {losses['relaylang']:.4f}, pytorch "
              f"{losses['torch']:.4f}; test accuracy: relaylang {relay_acc:.4f}, pytorch "
              f"{torch_acc:.4f}")
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
              f"({os.cpu_count()} CPUs)")
    if args.profile:
        rl.profile(lib, *call_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
