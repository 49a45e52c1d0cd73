"""A real ``python -m nexo_pkg plugin lsp`` subprocess driven by pygls's language client."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.lsp.client import LanguageClient

DEFAULT_TIMEOUT = 20.0
T = TypeVar("T")


class LoopThread:
    """An event loop on its own thread, so one server process can serve a whole test module
    (starting one costs about a second: lsprotocol's import dominates)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Awaitable[T], timeout: float = 120) -> T:
        async def wrapper() -> T:
            return await coroutine

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class LspSession:
    """Start the server, say ``initialize``/``initialized``, collect what it publishes.

    Use as ``async with LspSession() as session:``; leaving the block sends ``shutdown`` and
    ``exit`` and waits for the process, so no pipe or child outlives the test.
    """

    def __init__(
        self,
        *server_args: str,
        position_encodings: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.server_args = server_args
        self.position_encodings = position_encodings
        self.env = env
        self.client = LanguageClient("nexo-pkg-tests", "1")
        self.published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()
        self.history: list[types.PublishDiagnosticsParams] = []
        self.log_messages: list[str] = []
        self.initialize_result: types.InitializeResult | None = None
        self._version: dict[str, int] = {}

        # pygls leaves `feature` and `stop` unannotated; these casts state their real types.
        register = cast(
            "Callable[[str], Callable[[Callable[[Any], None]], object]]", self.client.feature
        )

        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.history.append(params)
            self.published.put_nowait(params)

        def on_log(params: types.LogMessageParams) -> None:
            self.log_messages.append(params.message)

        register(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(on_diagnostics)
        register(types.WINDOW_LOG_MESSAGE)(on_log)

    async def __aenter__(self) -> LspSession:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        await self.client.start_io(
            sys.executable, "-m", "nexo_pkg", "plugin", "lsp", *self.server_args, env=env
        )
        general = (
            types.GeneralClientCapabilities(
                position_encodings=[
                    types.PositionEncodingKind(name) for name in self.position_encodings
                ]
            )
            if self.position_encodings is not None
            else None
        )
        self.initialize_result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(general=general),
                    process_id=os.getpid(),
                    root_uri=None,
                )
            ),
            DEFAULT_TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), DEFAULT_TIMEOUT)
            self.client.exit(None)
            stop = cast("Callable[[], Awaitable[None]]", self.client.stop)
            await asyncio.wait_for(stop(), DEFAULT_TIMEOUT)
        finally:
            server = self.client._server
            if server is not None and server.returncode is None:
                server.kill()
                await server.wait()

    @property
    def returncode(self) -> int | None:
        server = self.client._server
        return None if server is None else server.returncode

    # -- documents -------------------------------------------------------------------------

    def open(self, path: Path, text: str) -> str:
        """``didOpen`` a document (it need not exist on disk); return its URI."""
        uri = path.as_uri()
        self._version[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="toml", version=1, text=text
                )
            )
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text (full sync, as the server asks); return the new version."""
        version = self._version[uri] + 1
        self._version[uri] = version
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return version

    def edit(self, uri: str, edits: Sequence[tuple[tuple[int, int], tuple[int, int], str]]) -> int:
        """Send ranged changes (``(start, end, text)``, positions as ``(line, character)``) in
        one ``didChange``, as an incremental client does; return the new version."""
        version = self._version[uri] + 1
        self._version[uri] = version
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(*start), types.Position(*end)),
                        text=text,
                    )
                    for start, end, text in edits
                ],
            )
        )
        return version

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics(
        self, uri: str, *, version: int | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> types.PublishDiagnosticsParams:
        """The next diagnostics published for ``uri`` (for ``version``, when given)."""

        async def wait() -> types.PublishDiagnosticsParams:
            while True:
                params = await self.published.get()
                if params.uri == uri and (version is None or params.version == version):
                    return params

        return await asyncio.wait_for(wait(), timeout)

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await asyncio.wait_for(
            self.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=line, character=character),
                )
            ),
            DEFAULT_TIMEOUT,
        )

    async def complete(self, uri: str, line: int, character: int) -> list[types.CompletionItem]:
        result = await asyncio.wait_for(
            self.client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=line, character=character),
                )
            ),
            DEFAULT_TIMEOUT,
        )
        if result is None:
            return []
        return list(result.items if isinstance(result, types.CompletionList) else result)

    async def code_actions(
        self, uri: str, diagnostics: Sequence[types.Diagnostic]
    ) -> list[types.CodeAction]:
        """The quick fixes offered for ``diagnostics`` (whole-document range)."""
        result = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(types.Position(0, 0), types.Position(10_000, 0)),
                    context=types.CodeActionContext(diagnostics=list(diagnostics)),
                )
            ),
            DEFAULT_TIMEOUT,
        )
        return [item for item in result or [] if isinstance(item, types.CodeAction)]
