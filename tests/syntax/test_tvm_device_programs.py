"""Programs TVM printed after device planning (tests/syntax/data/tvm/, vendored from
apache/tvm v0.19.0 tests/python/relay/test_pass_plan_devices.py, Apache-2.0): the device
annotations (`virtual_device=` on functions and parameters, `on_device`, `device_copy`,
VirtualDevice objects with their Target in the `#[metadata]` section) and the ops of
TVM's lowering (`memory.*`, `vm.*`) parse, print text that parses back structurally
equal, and type-check; and a `#[metadata]` table entry that is the null node is a
located error, not an internal one (issue 14)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import relaylang as rl
from relaylang.cli import main
from relaylang.ir.expr import Call, Function
from relaylang.ir.node import MetaObject
from relaylang.ir.traverse import post_order

DATA = Path(__file__).resolve().parent / "data" / "tvm"
PROGRAMS = sorted(DATA.glob("plan_devices_*.relay"))


def test_the_vendored_programs_are_there():
    assert len(PROGRAMS) >= 9


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_round_trip_is_structurally_equal_and_type_checks(path: Path) -> None:
    mod = rl.parse(path.read_text(), source_name=str(path))
    text = rl.astext(mod)
    again = rl.parse(text)
    assert rl.structural_equal(mod, again), text
    assert rl.astext(again) == text                      # printing is a fixpoint
    typed = rl.transform.InferType()(mod)
    typed_text = rl.astext(typed)
    retyped = rl.transform.InferType()(rl.parse(typed_text))
    assert rl.structural_equal(typed, retyped), typed_text


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_virtual_devices_survive_the_round_trip(path: Path) -> None:
    """Each annotation keeps its own device: the payloads (device type, target, memory
    scope) of every `virtual_device` read back are those written, in the same places."""
    def devices(mod: rl.IRModule) -> list[str]:
        out: list[str] = []
        for _, fn in sorted(mod, key=lambda item: item[0].name_hint):  # the printer sorts
            for node in post_order(fn):
                values: list[object] = []
                if isinstance(node, Function):
                    values += [p.virtual_device for p in node.params]
                    values.append(node.attrs.get("virtual_device") if node.attrs else None)
                if isinstance(node, Call) and node.attrs is not None:
                    values += [getattr(node.attrs, f, None) for f in (
                        "virtual_device", "src_virtual_device", "dst_virtual_device")]
                out += [v.payload for v in values if isinstance(v, MetaObject)]
        return out

    mod = rl.parse(path.read_text())
    found = devices(mod)
    assert found and all('"type_key":"VirtualDevice"' in p for p in found)
    assert devices(rl.parse(rl.astext(mod))) == found


def test_devices_keep_their_targets_and_scopes() -> None:
    mod = rl.parse((DATA / "plan_devices_free_on_device.relay").read_text())
    params = mod["main"].params
    payloads = [json.loads(p.virtual_device.payload) for p in params]
    scopes = [p["attrs"]["memory_scope"]["repr_str"] for p in payloads]
    assert set(scopes) <= {"", "scopeA", "scopeB"} and len(set(scopes)) > 1
    kinds = {p["attrs"]["target"]["attrs"]["kind"]["repr_str"] for p in payloads}
    assert kinds == {"llvm"}
    gpu = rl.parse((DATA / "plan_devices_shape_of.relay").read_text())["main"].params[0]
    target = json.loads(gpu.virtual_device.payload)["attrs"]["target"]
    assert target["attrs"]["kind"]["repr_str"] == "cuda"
    assert target["attrs"]["host"]["attrs"]["kind"]["repr_str"] == "llvm"


def test_lowering_ops_type_check_as_tvm() -> None:
    typed = rl.transform.InferType()(rl.parse((DATA / "plan_devices_alloc_tensor.relay")
                                              .read_text()))
    assert rl.astext(typed.functions[typed.get_global_var("main")].body.checked_type) \
        == "Tensor[(3, 2), float32]"
    typed = rl.transform.InferType()(rl.parse((DATA / "plan_devices_shape_of.relay")
                                              .read_text()))
    assert rl.astext(typed["main"].body.checked_type) == "Tensor[(2), int64]"


# ------------------------------------------------------------ the null node in a table

def _null_entry(key: str, body: str) -> str:
    doc = {"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": [key],
                                                   "data": [2]},
                                {"type_key": "Array", "data": [0]}], "b64ndarrays": []}
    return f'#[version = "0.0.5"]\n{body}\n#[metadata]\n{json.dumps(doc)}\n'


NULL_CASES = {
    "constant": (_null_entry("relay.Constant", "def @main() {\n  meta[relay.Constant][0]\n}"),
                 (3, 3), "`meta[relay.Constant][0]` is null in the metadata table"),
    "virtual_device": (_null_entry("VirtualDevice", "def @main(%a: Tensor[(2), float32]) {\n"
                                   "  on_device(%a, virtual_device=meta[VirtualDevice][0])\n}"),
                       (3, 32), "`meta[VirtualDevice][0]` is null in the metadata table"),
    "parameter_device": (_null_entry("VirtualDevice",
                                     "def @main(%a {virtual_device=meta[VirtualDevice][0]}: "
                                     "float32) {\n  %a\n}"),
                         (2, 30), "`meta[VirtualDevice][0]` is null"),
}


@pytest.mark.parametrize("case", list(NULL_CASES))
def test_a_null_table_entry_is_a_located_error(case: str) -> None:
    text, (line, column), message = NULL_CASES[case]
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse(text)
    d = info.value.diagnostics[0]
    assert (d.span.line, d.span.column) == (line, column) and message in d.message


@pytest.mark.parametrize("command", ["check", "fmt", "run"])
@pytest.mark.parametrize("case", list(NULL_CASES))
def test_the_cli_reports_a_null_entry_not_an_internal_error(tmp_path: Path, capsys,
                                                            command: str, case: str) -> None:
    path = tmp_path / "null.relay"
    path.write_text(NULL_CASES[case][0])
    assert main([command, str(path)]) == 1
    err = capsys.readouterr().err
    assert "is null in the metadata table" in err and "internal error" not in err


def test_an_unreferenced_null_entry_still_prints() -> None:
    mod = rl.parse(_null_entry("relay.Constant", "def @main() {\n  1f\n}"))
    assert rl.structural_equal(mod, rl.parse(rl.astext(mod)))
