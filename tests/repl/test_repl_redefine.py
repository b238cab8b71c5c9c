"""Redefining a definition other kept definitions use: they are re-read and re-bound
(repl/redefine.py), or, if they no longer type-check, nothing changes."""
from __future__ import annotations

import relaylang as rl
from relaylang.repl.session import Session


def _session(*inputs: str) -> Session:
    s = Session()
    for text in inputs:
        reply = s.submit(text)
        assert not reply.error, reply.output
    return s


def test_callers_use_the_redefined_function():
    s = _session("def @a(%x: float32) { %x }", "def @b(%x: float32) { @a(%x) }")
    assert s.submit("@b(2f)").output == "%out1: float32 = 2.0"
    assert s.submit("def @a(%x: float32) { multiply(%x, 10f) }").output == \
        "defined @a: fn (float32) -> float32\nupdated @b: fn (float32) -> float32"
    assert s.submit("@b(2f)").output == "%out2: float32 = 20.0"
    assert s.module.get_global_var("b") is not None and len(s.module.functions) == 2


def test_a_type_change_that_breaks_a_caller_names_it_and_changes_nothing():
    s = _session("def @a() { 1f }", "def @b() -> float32 {\n  @a()\n}")
    before = dict(s.module.functions)
    reply = s.submit("def @a() { 1 }")
    assert reply.error and "expected float32, found int32" in reply.output
    assert reply.output.endswith("\nerror: this input's redefinitions do not type-check "
                                 "with @b, which uses them; nothing was changed")
    reply = s.submit("def @a() -> int32 { 1 }")     # now the conflict is in @b's own text
    assert reply.output.startswith("<input 2>:2:3: error:") and "2 |   @a()" in reply.output
    assert reply.output.endswith("with @b, which uses them; nothing was changed")
    assert s.module.functions == before
    assert s.submit("@b()").output == "%out1: float32 = 1.0"
    assert s.submit(":type @a()").output == "float32"


def test_users_of_users_are_re_read_transitively():
    s = _session("def @a() { 1f }", "def @b() { add(@a(), 1f) }", "def @c() { @b() }",
                 "def @other() { 5f }")
    out = s.submit("def @a() { 10f }").output
    assert out == ("defined @a: fn () -> float32\nupdated @b: fn () -> float32\n"
                   "updated @c: fn () -> float32")          # @other is not touched
    assert s.submit("@c()").output == "%out1: float32 = 11.0"


def test_a_redefinition_may_call_a_user_mutual_recursion_across_inputs():
    s = _session("def @a(%n: int32) -> int32 { %n }",
                 "def @b(%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { @a(%n) } }")
    assert not s.submit("def @a(%n: int32) -> int32 { add(1, @b(subtract(%n, 1))) }").error
    assert s.submit("@a(4)").output == "%out1: int32 = 4"


def test_redefining_an_adt_re_reads_the_functions_using_its_constructors():
    s = _session("type Shape { Circle(float32), Square(float32) }",
                 "def @area(%s: Shape) -> float32 {\n"
                 "  match (%s) { Circle(%r) => multiply(%r, %r), Square(%w) => %w }\n}",
                 "def @unit() { @area(Circle(1f)) }")
    reply = s.submit("type Shape { Circle(float32), Square(float32), Dot }")
    assert reply.error and "`Dot` is not matched" in reply.output
    assert reply.output.endswith("with @area, which uses them; nothing was changed")
    assert s.submit("@unit()").output == "%out1: float32 = 1.0"
    # constructors reordered: new objects (and tags), users re-read and re-bound
    out = s.submit("type Shape { Square(float32), Circle(float32) }").output
    # (the parser gives an ADT defined in the same text as `Shape[]`: printed so)
    assert out.replace("Shape[]", "Shape") == ("defined type Shape\nupdated @area: fn (Shape) -> float32\n"
                   "updated @unit: fn () -> float32")
    assert s.submit("@unit()").output == "%out2: float32 = 1.0"
    assert s.submit("@area(Square(3f))").output == "%out3: float32 = 3.0"
    reply = s.submit("type Shape { Circle(int32), Square(float32) }")
    assert reply.error and "@area" in reply.output and "nothing was changed" in reply.output
    assert s.submit("@area(Circle(2f))").output == "%out4: float32 = 4.0"


def test_loaded_definitions_keep_their_file_and_line(tmp_path):
    path = tmp_path / "lib.relay"
    path.write_text('#[version = "0.0.5"]\ndef @a() { 1f }\n\n'
                    "def @b() -> float32 {\n  @a()\n}\n")
    s = _session(f":load {path}")
    assert s.submit("def @a() { 2f }").output.endswith("updated @b: fn () -> float32")
    assert s.submit("@b()").output == "%out1: float32 = 2.0"
    reply = s.submit("def @a() -> int32 { 2 }")
    assert reply.output.startswith(f"{path}:5:3: error:") and "5 |   @a()" in reply.output
    # a run-time error in a re-read definition points into the file too
    path.write_text('#[version = "0.0.5"]\ndef @pick(%t: T) -> float32 {\n'
                    "  match? (%t) { X => 1f }\n}\ndef @c() { @pick(Y) }\n")
    s = _session("type T { X, Y }", f":load {path}", "type T { X, Y, Z }")
    out = s.submit("@c()").output
    assert out.startswith(f"{path}:3:3: error: no clause of this match accepts the value Y")


def test_save_round_trips_after_redefinitions(tmp_path):
    s = _session("type L { Nil, One(float32) }", "def @a(%l: L) -> float32 { "
                 "match (%l) { Nil => 0f, One(%x) => %x } }", "def @b() { @a(One(3f)) }",
                 "type L { Nil, One(float32), Two(float32, float32) }\n"
                 "def @a(%l: L) -> float32 { match (%l) { Nil => 0f, One(%x) => %x, "
                 "Two(%x, %y) => add(%x, %y) } }",
                 "def @b() { @a(Two(1f, 2f)) }")
    path = tmp_path / "saved.relay"
    assert not s.submit(f":save {path}").error
    loaded = rl.parse(path.read_text())
    assert sorted(gv.name_hint for gv in loaded.functions) == ["a", "b"]
    t = _session(f":load {path}")
    assert t.submit("@b()").output == s.submit("@b()").output == "%out1: float32 = 3.0"


def test_a_deep_user_is_re_read():
    depth = 3000
    body = "".join(f"  let %x{i} = add(%x{i - 1}, @a());\n" for i in range(1, depth))
    s = _session("def @a() { 1f }", f"def @b() {{\n  let %x0 = @a();\n{body}  %x{depth - 1}\n}}")
    assert not s.submit("def @a() { 2f }").error
    assert s.submit("@b()").output == f"%out1: float32 = {2.0 * depth}"
