"""Op families as packages: the registry is a leaf that finds the families, each op is
declared once with what the passes need to know about it, and its implementations
register per target beside it and load on first use."""
from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from relaylang import op
from relaylang.ir.expr import Call, Var
from relaylang.op import registry

OP_DIR = Path(op.__file__).resolve().parent


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


# ---------------------------------------------------------------- the registry is a leaf

def test_registry_imports_no_family_and_no_numpy() -> None:
    loaded = json.loads(_python("""
        import json, sys
        import relaylang.op.registry
        print(json.dumps(sorted(m for m in sys.modules if m == "numpy" or
                                m.startswith(("numpy.", "relaylang.")))))
    """))
    assert "numpy" not in loaded
    ours = [m for m in loaded if m.startswith("relaylang.op.")]
    assert ours == ["relaylang.op.registry"]
    # Besides the packages it lives in, the registry reaches only the IR layer.
    others = [m for m in loaded if m.startswith("relaylang") and m.partition(".")[2]
              not in ("", "op", "op.registry", "ir") and not m.startswith("relaylang.ir.")]
    assert others == []


def test_registry_source_names_no_family() -> None:
    tree = ast.parse((OP_DIR / "registry.py").read_text())
    imported = {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level > 0}
    assert all(m.startswith("ir.") for m in imported), imported


def test_loading_every_family_loads_no_kernel_module() -> None:
    loaded = json.loads(_python("""
        import json, sys
        import relaylang.op as op
        op.all_ops(); op.attrs_schemas()
        print(json.dumps([m for m in sys.modules if m == "numpy"
                          or m.endswith(("numpy_kernels", "_kernels", "numpy_support"))]))
    """))
    assert loaded == []


def test_families_are_the_subpackages_of_relaylang_op() -> None:
    on_disk = sorted(f"relaylang.op.{p.name}" for p in OP_DIR.iterdir()
                     if (p / "__init__.py").exists() and not p.name.startswith("_"))
    assert op.families() == on_disk
    assert {"relaylang.op.nn", "relaylang.op.tensor", "relaylang.op.transform"} <= set(on_disk)
    assert {d.package for d in op.all_ops()} == set(on_disk)


def test_no_import_circle_inside_relaylang_op() -> None:
    """Module-level relative imports between the modules of relaylang/op form no cycle."""
    modules = {}
    for path in OP_DIR.rglob("*.py"):
        rel = path.relative_to(OP_DIR.parent.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = path
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.parse(path.read_text()).body:       # top level: what runs on import
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                for alias in node.names:
                    for candidate in (f"{target}.{alias.name}", target):
                        if candidate in modules and candidate != name:
                            edges[name].add(candidate)
                            break
    state: dict[str, int] = {}

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, iter(sorted(edges[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(sorted(edges[child]))))
                path.append(child)
        return None

    for m in sorted(modules):
        if m not in state:
            assert cycle_from(m) is None


# ---------------------------------------------------------------- declarations

def test_every_op_has_a_numpy_implementation_in_its_family() -> None:
    for d in op.all_ops():
        impl = op.implementation(d.name, "numpy")
        assert impl is not None, d.name
        assert impl.__module__.startswith(d.package + "."), (d.name, impl.__module__)


def test_kernel_modules_hold_no_name_tables() -> None:
    for family in op.families():
        module = importlib.import_module(f"{family}.numpy_kernels")
        assert not hasattr(module, "KERNELS"), family


def test_layout_kinds_are_the_ones_the_layout_passes_know() -> None:
    from relaylang.transform.layout.rules import LAYOUT_RULES, RULES
    kinds = {d.layout for d in op.all_ops()} - {None}
    assert kinds <= set(LAYOUT_RULES)
    assert set(LAYOUT_RULES) <= kinds                        # no rule is dead either
    assert {d.name for d in op.all_ops() if d.layout} == set(RULES)


def test_scale_axis_roles_are_the_ones_fold_scale_axis_knows() -> None:
    from relaylang.transform.fold_scale_axis import backward, forward
    # "multiply" is the scale itself (forward's producer rule, backward's _fold_multiply);
    # "shape" is what is_all_positive_constant (common.py) looks through.
    known = set(backward._SCALE) | set(forward._PREPARE) | set(forward._REWRITE) | {"shape"}
    roles = {d.scale_axis for d in op.all_ops()} - {None}
    assert roles <= known
    assert known <= roles
    by_role = {r: sorted(d.name for d in op.all_ops() if d.scale_axis == r) for r in roles}
    assert by_role["conv"] == ["nn.conv2d", "nn.conv3d"]
    assert by_role["relu"] == ["nn.leaky_relu", "nn.relu"]
    assert by_role["add_sub"] == ["add", "subtract"]


def test_fast_math_names_a_twin_op() -> None:
    fast = {d.name: d.fast_math for d in op.all_ops() if d.fast_math}
    assert fast == {"exp": "fast_exp", "erf": "fast_erf", "tanh": "fast_tanh",
                    "nn.softmax": "nn.fast_softmax"}
    for name, twin in fast.items():
        a, b = op.get_op_def(name), op.get_op_def(twin)
        assert (a.num_inputs, a.attrs, a.input_names) == (b.num_inputs, b.attrs, b.input_names)


def test_only_placement_and_transfer_are_non_computational() -> None:
    # TVM's TNonComputational ops: placement, transfer, and the ops of its lowering.
    assert {d.name for d in op.all_ops() if d.non_computational} == {
        "on_device", "device_copy", "memory.alloc_storage", "memory.alloc_tensor",
        "memory.kill", "vm.shape_of", "vm.invoke_tvm_op", "vm.reshape_tensor", "call_lowered"}


def test_call_builds_a_call_of_the_shared_op_node() -> None:
    x, y = Var("x"), Var("y")
    c = op.call("add", x, y)
    assert isinstance(c, Call) and c.op is op.get("add") and c.args == (x, y)
    assert c.attrs is None
    with pytest.raises(KeyError):
        op.call("no_such_op", x)


# ---------------------------------------------------------------- declare and implement

@pytest.fixture
def scratch_op():
    """Declares `scratch.twice` here (package: this test module) and removes it after."""
    def rel(args, attrs):
        return args[0]
    d = op.declare_op("scratch.twice", inputs=("data",), rel=rel,
                      pattern=op.OpPattern.ELEMWISE, layout="elemwise", doc="Twice the input.")
    try:
        yield d
    finally:
        registry._OPS.pop(d.name)
        registry._OP_NODES.pop(d.name)
        for key in [k for k in registry._IMPLS if k[0] == d.name]:
            registry._IMPLS.pop(key)


def test_declare_op_with_keywords(scratch_op) -> None:
    d = scratch_op
    assert op.get_op_def("scratch.twice") is d
    assert (d.num_inputs, d.input_names, d.layout, d.doc) == (1, ("data",), "elemwise",
                                                              "Twice the input.")
    assert d.package == __package__ or d.package == __name__   # the declaring module's
    with pytest.raises(LookupError, match="no numpy kernel"):
        d.kernel([np.ones(2)], None)
    with pytest.raises(ValueError, match="registered twice"):
        op.declare_op("scratch.twice", inputs=("data",))


def test_implement_registers_per_target(scratch_op) -> None:
    @op.implement("scratch.twice")
    def twice(inputs, attrs):
        return inputs[0] * 2

    assert op.implementation("scratch.twice", "numpy") is twice
    assert scratch_op.implementation("numpy") is twice
    assert scratch_op.kernel([np.arange(3)], None).tolist() == [0, 2, 4]
    assert op.implementation("scratch.twice", "llvm") is None
    lowering = op.implement("scratch.twice", target="llvm")(lambda *a: "loops")
    assert scratch_op.implementation("llvm") is lowering
    with pytest.raises(ValueError, match="two numpy implementations"):
        op.implement("scratch.twice")(lambda inputs, attrs: inputs[0])
    with pytest.raises(ValueError, match="no op scratch.thrice is declared"):
        op.implement("scratch.thrice")(twice)
    with pytest.raises(ValueError, match="unknown target"):
        op.implement("scratch.twice", target="cuda")


# ---------------------------------------------------------------- a new family folder

FAMILY_INIT = '''
from relaylang.op.registry import OpPattern, declare_op


def double_rel(args, attrs):
    return args[0]


declare_op("extfam.double", inputs=("data",), rel=double_rel, pattern=OpPattern.ELEMWISE,
           layout="elemwise", doc="Twice the input.")
'''

FAMILY_KERNELS = '''
from relaylang.op.registry import implement


@implement("extfam.double")
def double(inputs, attrs):
    return inputs[0] * 2
'''


def test_a_new_family_folder_is_all_a_new_op_needs(tmp_path: Path) -> None:
    family = tmp_path / "extfam"
    family.mkdir()
    (family / "__init__.py").write_text(FAMILY_INIT)
    (family / "numpy_kernels.py").write_text(FAMILY_KERNELS)
    out = json.loads(_python(f"""
        import json, sys
        import relaylang.op as op
        op.__path__.append({str(tmp_path)!r})          # the folder, as if in relaylang/op/
        import numpy as np
        import relaylang as rl
        from relaylang.transform.layout.rules import RULES, elemwise_rule
        d = op.get_op_def("extfam.double")
        lazy = "relaylang.op.extfam.numpy_kernels" not in sys.modules
        mod = rl.parse('#[version = "0.0.5"]\\n'
                       'def @main(%x: Tensor[(3), float32]) {{ extfam.double(%x) }}\\n')
        value = rl.evaluate(mod, np.arange(3, dtype="float32"))
        print(json.dumps({{"family": d.package, "lazy": lazy, "value": value.tolist(),
                          "rule": RULES["extfam.double"] is elemwise_rule,
                          "families": op.families()}}))
    """))
    assert out["family"] == "relaylang.op.extfam" and out["lazy"]
    assert out["value"] == [0.0, 2.0, 4.0] and out["rule"]
    assert "relaylang.op.extfam" in out["families"]
