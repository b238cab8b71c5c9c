"""End to end: the "Show graph" code action and its `relay.showGraph` command, which writes
the function's graph as one HTML page (as `relay viz -o F.html`) and returns its path."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsp_e2e import HEADER, RecordingClient, doc
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = HEADER + ("def @main(%x: Tensor[(2, 2), float32]) {\n  %0 = nn.relu(%x);\n"
                 "  add(%0, %x)\n}\n")


async def test_show_graph_action_and_command(client: RecordingClient, workspace: Path) -> None:
    path = workspace / "graph.relay"
    path.write_text(TEXT, encoding="utf-8")
    uri = path.as_uri()
    client.open(uri, TEXT)
    await client.diagnostics_for(uri, 1)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(uri), range=lsp.Range(lsp.Position(2, 4), lsp.Position(2, 4)),
        context=lsp.CodeActionContext(diagnostics=[])))
    graphs = [a for a in actions if isinstance(a, lsp.Command) and a.command == "relay.showGraph"]
    assert [a.title for a in graphs] == ["Show graph of @main",
                                         "Show graph of @main after FuseOps"]
    for action in graphs:
        result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=action.command, arguments=action.arguments))
        assert result["error"] is None
        page = Path(result["path"]).read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and ">nn.relu<" in page
        assert "https://" not in page and f"{path}:3:8" in page      # the source place
    assert "c-fused" in page                                        # the FuseOps one
    # errors come back, not raised
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.showGraph", arguments=[uri, "nothere"]))
    assert result["path"] is None and "no function @nothere" in result["error"]
    # an unsaved edit is drawn as it is in the editor
    client.change(uri, 2, lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(2, 7), lsp.Position(2, 14)), text="nope"))
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.showGraph", arguments=[uri, "main"]))
    assert result["path"] is None and result["error"].startswith(f"{path}:3:")
