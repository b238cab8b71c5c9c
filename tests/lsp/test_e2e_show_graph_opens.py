"""End to end: a client that handles `window/showDocument` is asked to open the page
`relay.showGraph` wrote, in the browser (external)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_e2e import HEADER, RecordingClient, make_client
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "relaylang", "lsp"], client_factory=make_client))
async def opener(lsp_client: RecordingClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(
        window=lsp.WindowClientCapabilities(
            show_document=lsp.ShowDocumentClientCapabilities(support=True)))))
    yield
    await lsp_client.shutdown_session()


async def test_the_page_is_shown(opener: RecordingClient, tmp_path: Path) -> None:
    path = tmp_path / "shown.relay"
    text = HEADER + "def @main(%x: float32) {\n  add(%x, 1f)\n}\n"
    path.write_text(text, encoding="utf-8")
    opener.open(path.as_uri(), text)
    await opener.diagnostics_for(path.as_uri(), 1)
    result = await opener.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="relay.showGraph", arguments=[path.as_uri(), "main"]))
    assert result["error"] is None
    (shown,) = opener.shown_documents       # pytest-lsp's client records them
    assert shown.external and shown.uri == Path(result["path"]).resolve().as_uri()
