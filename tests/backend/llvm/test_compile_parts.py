"""Compiling kernels in parallel parts (jit.compile_modules: forked children compile all
parts but the first) and the kernel cache's key: the same in every process, one entry
per set of kernels whatever the number of parts."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from llvm_check import fused_module

import relaylang as rl
from relaylang.backend.llvm import jit
from relaylang.backend.llvm.lower import lower_primitive

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(7)

# four kernels of different sizes (a reduction, elementwise chains, a matrix product)
BODIES = [
    ("%x: Tensor[(4, 33), float32]", "exp(add(%x, 1f))"),
    ("%x: Tensor[(5, 7), float32]", "sum(multiply(%x, %x), axis=[1])"),
    ("%x: Tensor[(3, 16), float32], %w: Tensor[(8, 16), float32]", "nn.dense(%x, %w)"),
    ("%x: Tensor[(2, 3, 9), float32]", "nn.relu(negative(%x))"),
]


def _prims() -> list:
    out = []
    for k, (params, body) in enumerate(BODIES):
        fn = fused_module(HEAD + f"def @main({params}) {{ {body} }}\n")["main"].body.op
        out.append(lower_primitive(fn, f"part_kernel_{k}"))
    return out


def _inputs(prim) -> list[np.ndarray]:
    return [jit.aligned_copy(RNG.standard_normal(b.shape).astype(b.dtype))
            for b in prim.params[:prim.num_inputs]]


def _run(kernel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    outs = [jit.aligned_empty(s, d) for s, d in kernel.params[kernel.num_inputs:]]
    kernel(inputs + outs)
    return outs


def _same_results(modules: list, reference: dict, prims: list) -> None:
    kernels = {n: k for m in modules for n, k in m.kernels.items()}
    assert sorted(kernels) == sorted(p.name for p in prims)
    for p in prims:
        inputs = _inputs(p)
        for got, want in zip(_run(kernels[p.name], inputs), _run(reference[p.name], inputs)):
            np.testing.assert_array_equal(got, want)


def test_split_parts_is_balanced_deterministic_and_complete() -> None:
    weights = [50, 3, 40, 7, 7, 1, 30, 2]
    parts = jit.split_parts(weights, 2)
    assert parts == jit.split_parts(weights, 2)
    assert sorted(i for p in parts for i in p) == list(range(len(weights)))
    assert all(p == sorted(p) for p in parts) and [p[0] for p in parts] == [0, 2]
    loads = [sum(weights[i] for i in p) for p in parts]
    assert max(loads) - min(loads) <= max(weights)
    assert jit.split_parts([5, 5], 8) == [[0], [1]]          # never an empty part
    assert jit.split_parts([5, 5, 5], 1) == [[0, 1, 2]]


def test_compile_jobs_reads_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("RELAY_COMPILE_JOBS", "1")
    assert jit.compile_jobs() == 1
    monkeypatch.setenv("RELAY_COMPILE_JOBS", "3")
    assert jit.compile_jobs() == (3 if sys.platform.startswith("linux") else 1)
    monkeypatch.setenv("RELAY_COMPILE_JOBS", "many")          # not a number: the default
    assert 1 <= jit.compile_jobs() <= jit.MAX_COMPILE_JOBS


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parts are forked on Linux")
def test_parts_compile_in_children_and_match_one_module(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RELAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    prims = _prims()
    reference = jit.compile_module(prims, cache=False).kernels
    modules = jit.compile_modules(prims, cache=True, jobs=2)
    assert len(modules) == 2
    _same_results(modules, reference, prims)
    entries = list(tmp_path.glob("*.o"))
    assert len(entries) == 1 and entries[0].read_bytes()  # one entry for the whole set
    # a hit: nothing compiled, the same parts
    monkeypatch.setattr(jit, "_fork_compile", lambda g: pytest.fail("compiled again"))
    monkeypatch.setattr(jit, "optimize", lambda mod: pytest.fail("compiled again"))
    again = jit.compile_modules(prims, cache=True, jobs=4)
    assert [sorted(m.kernels) for m in again] == [sorted(m.kernels) for m in modules]
    _same_results(again, reference, prims)
    # the raw IR of a part compiled by a child is made when asked
    assert "define" in again[1].get_source("ll-raw")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parts are forked on Linux")
def test_a_failing_child_is_compiled_here(monkeypatch) -> None:
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    prims = _prims()
    parent = os.getpid()
    real = jit.module_ir

    def module_ir(group):
        if os.getpid() != parent:
            raise RuntimeError("a child that fails")
        return real(group)
    monkeypatch.setattr(jit, "module_ir", module_ir)
    modules = jit.compile_modules(prims, cache=False, jobs=3)
    assert len(modules) == 3
    _same_results(modules, jit.compile_module(prims, cache=False).kernels, prims)


def test_a_corrupt_or_foreign_entry_is_rebuilt(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RELAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    prims = _prims()
    from relaylang.backend.llvm import cache
    key = jit.structure_key(prims)
    # a bundle naming other kernels, then garbage: both compiled again
    cache.store(key, jit._bundle([["other"]], [b"\x7fELF..."]))
    modules = jit.compile_modules(prims, cache=True, jobs=2)
    reference = jit.compile_module(prims, cache=False).kernels
    _same_results(modules, reference, prims)
    (entry,) = tmp_path.glob("*.o")
    entry.write_bytes(b"garbage")                  # fails the entry's digest
    _same_results(jit.compile_modules(prims, cache=True, jobs=1), reference, prims)
    # the single-module compiler does not take a bundle for its object code
    cache.store(key, jit._bundle([[p.name for p in prims[:2]], [p.name for p in prims[2:]]],
                                 [m.object_code for m in modules[:2]]))
    _same_results([jit.compile_module(prims, cache=True)], reference, prims)


def test_cache_key_is_the_same_in_every_process() -> None:
    """The key must not depend on Python's string hashing (randomised per process): the
    knob key a PrimFunc records is a structural hash made with it, and is not keyed."""
    script = (
        "import hashlib, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_compile_parts import _prims\n"
        "from relaylang.backend.llvm.jit import structure_key\n"
        "print(hashlib.sha256(structure_key(_prims()).encode()).hexdigest())\n")
    here = os.path.dirname(os.path.abspath(__file__))
    helpers = os.path.join(os.path.dirname(os.path.dirname(here)), "helpers")
    keys = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed,
                   PYTHONPATH=os.pathsep.join([helpers, os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, "-c", script, here], env=env,
                             capture_output=True, text=True, check=True)
        keys.add(out.stdout.strip().splitlines()[-1])
    assert len(keys) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parts are forked on Linux")
def test_build_in_parts_runs_exports_and_loads(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    monkeypatch.setenv("RELAY_COMPILE_JOBS", "2")
    mod = rl.parse(HEAD + """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  %3 = sum(%2, axis=[1]);
  exp(%3)
}""")
    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    x = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    lib = rl.build(mod, target="llvm", params={"w": w}, cache=False)
    assert len(lib.modules) == 2
    want = rl.create_executor(mod, target="interp", params={"w": w})(x)
    np.testing.assert_allclose(lib(x), want, rtol=1e-5, atol=1e-5)
    path = tmp_path / "parts.rlib"
    lib.export_library(str(path))
    objects = [n for n in zipfile.ZipFile(path).namelist() if n.endswith(".o")]
    assert len(objects) == 2
    for name in objects:
        assert zipfile.ZipFile(path).read(name)[:4] == b"\x7fELF"
    np.testing.assert_allclose(rl.runtime.load_module(str(path))(x), want, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parts are forked on Linux")
def test_an_error_here_leaves_no_child_behind(monkeypatch) -> None:
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    parent = os.getpid()
    started: list[int] = []
    real_fork, real_ir = jit._fork_compile, jit.module_ir

    def fork(group):
        worker = real_fork(group)
        assert worker is not None
        started.append(worker[0])
        return worker

    def module_ir(group):
        if os.getpid() == parent:
            raise RuntimeError("an error in the parent's part")
        return real_ir(group)
    monkeypatch.setattr(jit, "_fork_compile", fork)
    monkeypatch.setattr(jit, "module_ir", module_ir)
    with pytest.raises(RuntimeError, match="parent's part"):
        jit.compile_modules(_prims(), cache=False, jobs=3)
    assert len(started) == 2
    for pid in started:                       # killed and reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parts are forked on Linux")
def test_a_stuck_child_is_killed_and_its_part_compiled_here(monkeypatch) -> None:
    import time
    monkeypatch.setattr(jit, "PARALLEL_MIN_NODES", 0)
    monkeypatch.setattr(jit, "WORKER_TIMEOUT_MIN", 0.5)
    monkeypatch.setattr(jit, "WORKER_TIMEOUT_FACTOR", 0.0)
    parent = os.getpid()
    started: list[int] = []
    real_fork, real_ir = jit._fork_compile, jit.module_ir

    def fork(group):
        worker = real_fork(group)
        assert worker is not None
        started.append(worker[0])
        return worker

    def module_ir(group):
        if os.getpid() != parent:
            time.sleep(60)                    # stuck
        return real_ir(group)
    monkeypatch.setattr(jit, "_fork_compile", fork)
    monkeypatch.setattr(jit, "module_ir", module_ir)
    prims = _prims()
    start = time.perf_counter()
    modules = jit.compile_modules(prims, cache=False, jobs=2)
    assert time.perf_counter() - start < 30
    _same_results(modules, jit.compile_module(prims, cache=False).kernels, prims)
    (pid,) = started
    with pytest.raises(ProcessLookupError):     # killed and reaped
        os.kill(pid, 0)
