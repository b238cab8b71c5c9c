"""End to end: completion, signature help, semantic tokens, inlay hints, formatting, code
actions and the pass preview command (identical to `relay opt`)."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_e2e import FEATURES, HEADER, LINES, RecordingClient, at, doc, opened
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_completion_of_locals_globals_ops_and_attributes(client: RecordingClient) -> None:
    text = HEADER + "def @g(%a: float32) { %a }\ndef @f(%x: Tensor[(2), float32]) {\n" \
                    "  let %y = nn.so\n}\n"
    uri = await opened(client, "complete", text)

    async def labels(line: int, character: int) -> dict[str, lsp.CompletionItem]:
        found = await client.text_document_completion_async(lsp.CompletionParams(
            text_document=doc(uri), position=lsp.Position(line, character)))
        return {i.label: i for i in found.items}

    ops = await labels(3, len("  let %y = nn.so"))
    softmax = ops["nn.softmax"]
    assert softmax.kind == lsp.CompletionItemKind.Function
    assert softmax.text_edit.range == lsp.Range(lsp.Position(3, 11), lsp.Position(3, 16))
    client.change(uri, 2, lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(3, 11), lsp.Position(3, 16)), text="nn.softmax(%"))
    await client.diagnostics_for(uri, 2)
    local = await labels(3, len("  let %y = nn.softmax(%"))
    assert "%x" in local and local["%x"].kind == lsp.CompletionItemKind.Variable
    assert local["%x"].detail == "Tensor[(2), float32]"
    client.change(uri, 3, lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(3, 23), lsp.Position(3, 23)), text="x, "))
    await client.diagnostics_for(uri, 3)
    attrs = await labels(3, len("  let %y = nn.softmax(%x, "))
    assert attrs["axis"].kind == lsp.CompletionItemKind.Property
    help_ = await client.text_document_signature_help_async(lsp.SignatureHelpParams(
        text_document=doc(uri), position=lsp.Position(3, len("  let %y = nn.softmax(%x, "))))
    (sig,) = help_.signatures
    assert sig.label.startswith("nn.softmax(") and help_.active_parameter == 1
    assert [sig.label[slice(*p.label)] for p in sig.parameters] == ["data", "axis=-1"]


async def test_completion_of_globals_after_at(client: RecordingClient) -> None:
    text = HEADER + "def @helper() { 1f }\ndef @f() {\n  @\n}\n"
    uri = await opened(client, "globals", text)
    found = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=doc(uri), position=lsp.Position(3, 3)))
    assert "@helper" in {i.label for i in found.items}


async def test_completion_of_constructors_and_keywords(client: RecordingClient) -> None:
    text = FEATURES.replace("  (%0, %n)\n", "  (%0, %n, Co)\n  le\n")
    uri = await opened(client, "ctors", text)
    lines = text.split("\n")
    found = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=doc(uri), position=lsp.Position(14, lines[14].index("Co)") + 2)))
    cons = {i.label: i for i in found.items}["Cons"]
    assert cons.kind == lsp.CompletionItemKind.EnumMember and "A" in (cons.detail or "")
    found = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=doc(uri), position=lsp.Position(15, 4)))
    assert "let" in {i.label for i in found.items if i.kind == lsp.CompletionItemKind.Keyword}


async def test_semantic_tokens_and_inlay_hints(client: RecordingClient) -> None:
    uri = await opened(client, "tokens")
    tokens = await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(text_document=doc(uri)))
    data, line, start, seen = tokens.data, 0, 0, {}
    for i in range(0, len(data), 5):
        line = line + data[i]
        start = start + data[i + 1] if data[i] == 0 else data[i + 1]
        seen[LINES[line][start:start + data[i + 2]]] = data[i + 3]
    types = ["function", "variable", "type", "enumMember", "property", "number"]
    assert types[seen["nn.softmax"]] == "function" and types[seen["axis"]] == "property"
    assert types[seen["List"]] == "type" and types[seen["Cons"]] == "enumMember"
    assert types[seen["%n"]] == "variable" and types[seen["@len"]] == "function"
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=doc(uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(20, 0))))
    by_line = {h.position.line: h.label for h in hints}
    assert by_line[13] == ": int32" and hints[0].kind == lsp.InlayHintKind.Type
    assert by_line[12].startswith(": Tensor[(2, 3), float32]")
    assert 11 not in by_line                      # %x is annotated


async def test_semantic_tokens_legend_is_advertised(client: RecordingClient) -> None:
    caps = client.initialize_result.capabilities
    legend = caps.semantic_tokens_provider.legend
    assert list(legend.token_types) == ["function", "variable", "type", "enumMember", "property",
                                  "number"]


async def test_whole_document_and_range_formatting(client: RecordingClient) -> None:
    from relaylang.syntax.format import format_text
    messy = FEATURES.replace("def @main(%x: Tensor[(2, 3), float32]) {",
                             "def @main(%x:Tensor[(2,3),float32]){")
    uri = await opened(client, "format", messy)
    opts = lsp.FormattingOptions(tab_size=2, insert_spaces=True)
    (edit,) = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(text_document=doc(uri), options=opts))
    assert edit.new_text == format_text(messy).text
    edits = await client.text_document_range_formatting_async(lsp.DocumentRangeFormattingParams(
        text_document=doc(uri), range=lsp.Range(lsp.Position(11, 0), lsp.Position(11, 5)),
        options=opts))
    assert all(e.range.start.line >= 11 for e in edits) and edits
    assert edits[0].new_text.startswith("def @main(%x: Tensor[(2, 3), float32]) {")


async def test_insert_annotation_action(client: RecordingClient) -> None:
    uri = await opened(client, "annotate")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=lsp.Range(at("%n", 13), at("%n", 13)),
        context=lsp.CodeActionContext(diagnostics=[])))
    (insert,) = [a for a in actions if isinstance(a, lsp.CodeAction)]
    (edit,) = insert.edit.changes[uri]
    assert edit.new_text == ": int32" and edit.range.start == at("%n", 13, 2)
    previews = [a for a in actions if isinstance(a, lsp.Command)
                and a.command != "relay.showGraph"]
    assert previews and all(a.command == "relay.previewPass" and a.arguments[2] == "main"
                            for a in previews)


async def test_preview_pass_is_what_relay_opt_prints(client: RecordingClient,
                                                      workspace: Path) -> None:
    path = workspace / "preview.relay"
    text = HEADER + "def @main(%x: float32) {\n  %0 = add(1f, 2f);\n  multiply(%0, %x)\n}\n"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.open(uri, text)
    await client.diagnostics_for(uri, 1)
    cli = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "relaylang", "opt", str(path), "-p", "FoldConstant"],
        capture_output=True, text=True, check=True)
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.previewPass", arguments=[uri, "FoldConstant", "main"]))
    assert result["output"] == cli.stdout and "3f" in cli.stdout
    assert result["exitCode"] == 0 and result["function"].startswith("def @main")
    # an unsaved edit is previewed as it is in the editor; errors name the document's path
    client.change(uri, 2, lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(2, 11), lsp.Position(2, 13)), text="nope"))
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.previewPass", arguments=[uri, "FoldConstant"]))
    assert result["exitCode"] == 1 and result["output"] == ""
    assert result["errors"].startswith(f"{path}:3:")
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.previewPass", arguments=[uri, "NoSuchPass"]))
    assert "unknown pass `NoSuchPass`" in result["errors"]
