"""The nexo language server: lint diagnostics, hover, completion and quick fixes for the files
docs/editors.md lists, with the same codes, messages and ranges as ``nexo plugin lint``.

Every handler is wrapped: a half-typed buffer that trips a bug logs the error (server log and
``window/logMessage``) and the request returns nothing, rather than the server dying under the
editor. Linting after edits is debounced and a newer version of a document cancels the
pending lint of the older one; results for a version that is no longer current are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import posixpath
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, Literal, ParamSpec, TypeVar, cast
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from nexo_pkg import __version__
from nexo_pkg.core.diagnostics import Diagnostic, FileResult, Position
from nexo_pkg.core.errors import NexoError
from nexo_pkg.lint.config import CONFIG_FILES, LintSettings
from nexo_pkg.lint.daemon_files import EXTENSIONS_FILE, config_kind
from nexo_pkg.lint.discovery import shadowing_manifest
from nexo_pkg.lint.engine import lint_bytes, lint_config_source, lint_source, note_shadowed
from nexo_pkg.lint.fixes import FIXABLE, rule_of, subject_at
from nexo_pkg.lsp import code_actions, completion, hover, yaml_help
from nexo_pkg.lsp.positions import (
    ClientRange,
    Encoding,
    LineIndex,
    apply_change,
    normalise_encoding,
)
from nexo_pkg.lsp.schema_nav import SchemaNavigator, packaged_navigator
from nexo_pkg.manifest.document import decode_manifest
from nexo_pkg.manifest.microapp import COMPANION_MANIFEST_NAME, is_extension_shape
from nexo_pkg.manifest.names import (
    CANONICAL_MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    is_manifest_name,
)
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest_text

__all__ = [
    "DEFAULT_DEBOUNCE_SECONDS",
    "NexoLanguageServer",
    "create_server",
    "document_kind",
    "serve",
]

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_SECONDS = 0.1
POLICY_FILE_NAME = "trusted_keys.toml"
MANIFEST_SCHEMA = "nexo-plugin.schema.json"
POLICY_SCHEMA = "trusted-keys.schema.json"
BYTE_ORDER_MARK = "\ufeff"

# A fleet's wanted set and lock have schemas but no rules of their own: schema-only linting.
SCHEMA_ONLY_FILES = {
    "nexo-plugins.toml": "nexo-plugins.schema.json",
    "nexo-plugins.lock": "nexo-plugins.lock.schema.json",
}

#: The files on disk whose change can change an open document's findings: the lint config
#: files, the manifests whose presence beside another one makes it shadowed (NX006) and which
#: the daemon's config files are checked against, and the ``extensions.yaml`` that
#: ``agents.yaml`` and its drop-ins are checked against (NX225, the microapp ids it keeps).
WATCHED_NAMES = (*CONFIG_FILES, CANONICAL_MANIFEST_NAME, COMPANION_MANIFEST_NAME, EXTENSIONS_FILE)

DocumentKind = Literal[
    "manifest", "policy", "nexo-plugins.toml", "nexo-plugins.lock", "daemon-config"
]
P = ParamSpec("P")
R = TypeVar("R")


def document_kind(uri: str) -> DocumentKind | None:
    """Which linter a document gets, from its file name; ``None`` for any other file."""
    name = posixpath.basename(unquote(urlparse(uri).path))
    if is_manifest_name(name):
        return "manifest"
    if name == POLICY_FILE_NAME:
        return "policy"
    if name in SCHEMA_ONLY_FILES:
        return cast("DocumentKind", name)
    # `.yaml` and `.yml` in any case: lint reads `agents.d/x.YAML` and `agents.d/x.yml` as
    # drop-ins too (NX235: the daemon skips them).
    if name.lower().endswith((".yaml", ".yml")) and config_kind(_document_path(uri)) is not None:
        return "daemon-config"
    return None


def _document_path(uri: str) -> str:
    """The file system path of a ``file:`` URI (Windows drive letters included), else the URI
    (also for a ``file:`` URI whose path holds a NUL, ``%00``, which no file system takes: its
    buffer is linted as a document that names no file)."""
    path = to_fs_path(uri)
    return path if path and "\x00" not in path else uri


def navigator_for(kind: DocumentKind) -> SchemaNavigator | None:
    """The schema navigator for a document kind (``None`` if the schema is not shipped, or
    for YAML, which the TOML navigator cannot read)."""
    schema = {"manifest": MANIFEST_SCHEMA, "policy": POLICY_SCHEMA, **SCHEMA_ONLY_FILES}.get(kind)
    return None if schema is None else packaged_navigator(schema)


def manifest_options(path: str) -> LintOptions | None:
    """The settings `nexo plugin lint` would use for the manifest at ``path``: those of the
    nearest config file above it (``select``, ``ignore``, ``per-file-ignores``), read afresh
    so an edit of the config shows at once. ``None`` (every rule) for a document that is not
    a file or whose config file is broken (logged)."""
    file = Path(path)
    if not file.is_absolute():
        return None
    try:
        return LintSettings(Path.cwd()).options_for(file)
    except NexoError as error:
        _settings_failed(path, error)
        return None


def excluded(path: str) -> bool:
    """Whether the ``exclude`` of the nearest config file (read afresh) skips the file at
    ``path``, as ``nexo plugin lint --force-exclude`` skips a file it is named (an editor
    names every file it opens, as pre-commit does; ruff's server does the same)."""
    file = Path(path)
    if not file.is_absolute():
        return False
    try:
        return LintSettings(Path.cwd()).excluded(file)
    except NexoError as error:
        _settings_failed(path, error)
        return False


# The lint settings failures met by the lint running on this thread, when it collects them.
_settings_problems = threading.local()


def _settings_failed(path: str, error: NexoError) -> None:
    """Log that the lint settings for ``path`` could not be read, and note it for the lint
    running on this thread (the server tells the editor too: the command refuses to lint)."""
    message = f"lint settings for {path}: {error.message}"
    logger.warning("%s", message)
    noted: list[str] | None = getattr(_settings_problems, "found", None)
    if noted is not None and message not in noted:
        noted.append(message)


def lint_text(kind: DocumentKind, text: str, path: str) -> tuple[Diagnostic, ...]:
    """Lint ``text`` with the linter for ``kind``, as ``nexo plugin lint --force-exclude``
    lints the file at ``path``: nothing for a file the lint config excludes, and a manifest
    the daemon ignores for another one beside it gets its warning too."""
    if excluded(path):
        return ()
    found = _lint_text(kind, text, path)
    used = (
        shadowing_manifest(Path(path)) if kind == "manifest" and Path(path).is_absolute() else None
    )
    if used is None:
        return found
    return note_shadowed(FileResult(path, found, text), used, manifest_options(path)).diagnostics


def _lint_text(kind: DocumentKind, text: str, path: str) -> tuple[Diagnostic, ...]:
    """Lint ``text`` with the linter for ``kind``; the linters never raise for bad input.

    As ``nexo plugin lint`` reads a file: a leading byte-order mark is not part of the TOML
    (the findings' columns on the first line still count it, as the editor does), and a
    manifest or trust policy that is binary (a NUL) or too large gets the command's one
    finding about that.
    """
    if text.startswith(BYTE_ORDER_MARK):
        return tuple(_after_mark(item) for item in _lint_marked(kind, text, path))
    return _lint_marked(kind, text, path)


def _lint_marked(kind: DocumentKind, text: str, path: str) -> tuple[Diagnostic, ...]:
    """:func:`_lint_text` of ``text`` as it is, one leading byte-order mark dropped (only one:
    a second is the document's, as the daemon reads it)."""
    raw = text.encode("utf-8", "surrogatepass")
    if kind == "daemon-config" and not decode_manifest(raw, yaml=True)[1]:
        unmarked = text.removeprefix(BYTE_ORDER_MARK)
        result = lint_config_source(
            unmarked,
            path=path,
            options=manifest_options(path),
            bom=text.startswith(BYTE_ORDER_MARK),
        )
        return () if result is None else result.diagnostics
    # The command picks the linter of a trust policy and of a fleet's files by their names
    # too (a fleet file against its schema), and applies the settings; it drops the mark.
    # A YAML file whose bytes the command judges first (over the size cap, large, binary)
    # gets the command's findings about them too.
    return lint_bytes(raw, path=_named_as(kind, path), options=manifest_options(path)).diagnostics


def _named_as(kind: DocumentKind, path: str) -> str:
    """``path``, or for a fleet file whose URI is not a ``file:`` one (``untitled:…``, whose
    path does not end in the name), its bare name: the command picks the linter by it."""
    if kind in SCHEMA_ONLY_FILES and Path(path).name != kind:
        return kind
    return path


def _mark_as_space(text: str) -> str:
    """``text`` with a leading byte-order mark read as a space: the TOML and YAML readers of
    hover, completion and quick fixes see the document as lint does, at the same offsets."""
    return " " + text[1:] if text.startswith(BYTE_ORDER_MARK) else text


def _after_mark(diagnostic: Diagnostic) -> Diagnostic:
    """A finding in text that followed a byte-order mark, in the text with the mark."""

    def moved(position: Position) -> Position:
        return replace(position, column=position.column + 1) if position.line == 1 else position

    span = diagnostic.span
    return replace(diagnostic, span=replace(span, start=moved(span.start), end=moved(span.end)))


def to_lsp_range(client_range: ClientRange) -> types.Range:
    """The lsprotocol form of a :class:`ClientRange`."""
    return types.Range(
        start=types.Position(client_range.start.line, client_range.start.character),
        end=types.Position(client_range.end.line, client_range.end.character),
    )


def offsets_to_range(index: LineIndex, start: int, end: int, encoding: Encoding) -> types.Range:
    """An LSP range for two offsets into the document text."""
    first = index.to_client(*index.line_column(start), encoding)
    return to_lsp_range(ClientRange(first, index.to_client(*index.line_column(end), encoding)))


def to_lsp_diagnostic(
    diagnostic: Diagnostic, index: LineIndex, encoding: Encoding
) -> types.Diagnostic:
    """Convert an engine finding to an LSP diagnostic (0-based, in client code units)."""
    return types.Diagnostic(
        range=to_lsp_range(index.span_to_client(diagnostic.span, encoding)),
        message=diagnostic.message,
        severity=(
            types.DiagnosticSeverity.Error
            if diagnostic.severity == "error"
            else types.DiagnosticSeverity.Warning
        ),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        source="nexo",
        data=_diagnostic_data(diagnostic, index),
    )


def _diagnostic_data(diagnostic: Diagnostic, index: LineIndex) -> dict[str, str]:
    """What a code action request needs back: the rule, its help and, for a finding of a rule
    with quick fixes, the name it reported (``subject``), which the text at the range must
    still be for a fix to be offered."""
    data = {"name": diagnostic.name, "key_path": diagnostic.key_path, "help": diagnostic.help}
    if diagnostic.fix is not None:
        data["subject"] = diagnostic.fix.subject
        data["applicability"] = diagnostic.fix.applicability
    elif rule_of(diagnostic.code, diagnostic.name) in FIXABLE:
        # No fix for lint --fix (a rename onto a name already there), yet the editor may
        # offer another (the removal of a variable): the name is carried all the same.
        start, end = (
            index.engine_offset(position)
            for position in (diagnostic.span.start, diagnostic.span.end)
        )
        subject = subject_at(index.text, start, end, rule_of(diagnostic.code, diagnostic.name))
        if subject is not None:
            data["subject"] = subject
    return data


def _guarded(handler: Callable[P, R]) -> Callable[P, R | None]:
    """Make a synchronous handler log its failures and return ``None`` (no result) instead."""

    @functools.wraps(handler)
    def run(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return handler(*args, **kwargs)
        except Exception:  # the editor session must outlive any bug in a handler
            logger.exception("%s failed", handler.__name__)
            return None

    return run


@dataclass
class _Snapshot:
    """An open nexo document as it was at one version: what a lint run works on."""

    uri: str
    kind: DocumentKind
    text: str
    version: int | None


class _QuietWriter:
    """pygls's writer, except that a client that has gone (its end of stdout closed: an editor
    that quits without awaiting the ``shutdown`` reply) ends the output quietly: one debug
    line, then nothing more is written, instead of a BrokenPipe error for every reply and
    notification still on its way."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.gone = False

    def write(self, data: bytes) -> Any:
        if self.gone:
            return None
        try:
            return self.writer.write(data)
        except (BrokenPipeError, ConnectionResetError, ValueError):
            # ValueError: the stream was closed under us ("I/O operation on closed file").
            self.gone = True
            logger.debug("the client closed the connection; no more output")
            return None

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.writer.close()


def _is_valid_id(value: Any) -> bool:
    """Whether ``value`` is an id JSON-RPC 2.0 allows: a string, a number or null. A number
    too large for a float (``1e400``) or a ``NaN`` is none: echoed back, it would not be
    JSON."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (isinstance(value, (int, str)) and not isinstance(value, bool))


def _is_message(data: Any) -> bool:
    """Whether ``data`` is a JSON-RPC 2.0 request, notification or response object."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return False
    if "id" in data and not _is_valid_id(data["id"]):
        return False
    if "method" in data:
        return isinstance(data["method"], str)
    return "id" in data and ("result" in data or "error" in data)


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, except that a request whose params do not deserialize is answered.

    pygls raises ``-32602`` from the reader, which logs it and moves on, so a request with a
    position of ``-1`` or ``2**31`` (outside LSP's ``uinteger``) would never get a response and
    the client would wait forever. The error goes back to the client under the request's id.
    """

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        super().set_writer(_QuietWriter(writer), include_headers)

    @property
    def client_gone(self) -> bool:
        """Whether the client closed its end of the output."""
        return isinstance(self.writer, _QuietWriter) and self.writer.gone

    #: The status ``exit`` asked for: LSP's 1 when no ``shutdown`` came first; ``None`` until
    #: an ``exit`` is read.
    exit_code: int | None = None

    @property
    def final_status(self) -> int:
        """The status the process ends with: the ``exit``'s, or, when the input ended without
        one, 0 after a ``shutdown`` and 1 without (the client went away mid-session)."""
        if self.exit_code is not None:
            return self.exit_code
        return 0 if self._shutdown else 1

    def handle_message(self, message: Any) -> None:
        """Hand ``message`` on, except as JSON-RPC and LSP say for a message that is not one,
        or one at the wrong time.

        What is not a JSON-RPC 2.0 message is answered ``-32600`` (:meth:`_refuse_invalid`).
        Before ``initialize`` a request is answered ``-32002`` (server not initialized) and a
        notification other than ``exit`` is dropped; a second ``initialize`` is answered
        ``-32600`` and changes nothing (as tower-lsp's ``Initialize`` layer does); after
        ``shutdown`` a request is answered ``-32600`` (invalid request) instead of never
        (pygls drops it, and the client would wait for ever).
        """
        if isinstance(message, dict) and message.get("method") == _REFUSED:
            return  # the reader has answered it (CappedReader)
        if not _is_message(message):
            self._refuse_invalid(message)
            return
        message = self._structure(message)
        if message is None:
            return
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        if method is not None and method != types.EXIT:
            refusal: JsonRpcException | None = None
            if self._workspace is None and method != types.INITIALIZE:
                refusal = JsonRpcServerNotInitialized("the server has not been initialized")
            elif self._workspace is not None and method == types.INITIALIZE:
                refusal = JsonRpcInvalidRequest("the server is already initialized")
            elif self._shutdown:
                refusal = JsonRpcInvalidRequest("the server is shutting down")
            if refusal is not None:
                logger.warning("%s refused: %s", method, refusal.message)
                if request_id is not None:
                    self._send_response(request_id, error=refusal.to_response_error())
                return
        if method == types.EXIT:
            self.exit_code = 0 if self._shutdown else 1
        super().handle_message(message)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """Hand a notification on, except those the server has nothing to do with: a
        notification it has no handler for (``workspace/didChangeConfiguration``: it has no
        settings; ``$/progress``, ``textDocument/willSave``, …) and the cancellation of a
        request already answered (every request is answered at once, so an editor's
        ``$/cancelRequest`` comes after the answer). Both are dropped, as LSP allows, with a
        debug line rather than a warning in the editor's server log each time."""
        if method_name == types.CANCEL_REQUEST:
            request_id = getattr(params, "id", None)
            if request_id not in self._request_futures:
                logger.debug("$/cancelRequest of %r, already answered: ignored", request_id)
                return
        elif method_name not in self.fm.builtin_features and method_name not in self.fm.features:
            logger.debug("%s: no handler, dropped", method_name)
            return
        super()._handle_notification(method_name, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Keep every JSON object as it is: the reader calls this for each object of a body,
        nested ones too, and only the whole body is a message (:meth:`_structure`). An object
        in the client's own JSON (``initializationOptions``) that has a ``jsonrpc`` key is
        data, not a message of its own."""
        return data

    def _structure(self, data: dict[str, Any]) -> Any:
        """The typed message for the JSON-RPC object ``data``, or ``None`` when its params do
        not fit the method: a request is then answered with the error (``-32602``), a
        notification is logged (never answered, and no pop-up in the editor).

        ``params`` may be omitted (JSON-RPC 2.0); for a method pygls has no type for, the
        message is read with ``null`` params, so an unknown request is answered ``-32601``
        (method not found) and an unknown notification is dropped.
        """
        if "method" in data and "params" not in data and not self.get_message_type(data["method"]):
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "method" in data and "id" in data:
                self._send_response(data["id"], error=error.to_response_error())
            else:
                logger.warning(
                    "%s: not read (%s), dropped", data.get("method", "a response"), error.message
                )
            return None

    def _refuse_invalid(self, message: Any) -> None:
        """Answer what is not a JSON-RPC 2.0 message with ``-32600``: an object whose
        ``jsonrpc`` is not ``"2.0"``, whose ``method`` is not a string or whose ``id`` is
        neither a string nor a number, one with neither a method nor a result, a batch (which
        LSP does not use), any other JSON value. The answer goes under the message's id when
        it has a valid one, else under a null id, as JSON-RPC 2.0 says."""
        request_id = message.get("id") if isinstance(message, dict) else None
        logger.warning("not a JSON-RPC 2.0 message, refused: %.200r", message)
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": request_id if _is_valid_id(request_id) else None,
                "error": {
                    "code": JsonRpcInvalidRequest.CODE,
                    "message": 'not a JSON-RPC 2.0 message (`"jsonrpc": "2.0"` and a method)',
                },
            }
        )

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Iterator[Any]:
        """Apply the changes, then hand on to the server's handler.

        The server asks for full synchronisation, yet a client may send ranged changes all the
        same; pygls would then replace the whole document with the text of the range. Ranged
        changes are applied where they say, in the negotiated encoding, as LSP counts lines
        (``\\n``, ``\\r\\n``, ``\\r``); a range past the end clamps to the end.
        """
        uri = params.text_document.uri
        if unquote(uri) in self.workspace.text_documents:
            document = self.workspace.get_text_document(uri)
            negotiated = self.workspace.position_encoding
            encoding = normalise_encoding(str(getattr(negotiated, "value", negotiated)))
            text = document.source
            for change in params.content_changes:
                if isinstance(change, types.TextDocumentContentChangePartial):
                    start, end = change.range.start, change.range.end
                    text = apply_change(
                        text,
                        (start.line, start.character),
                        (end.line, end.character),
                        change.text,
                        encoding,
                    )
                else:
                    text = change.text
            self.workspace.put_text_document(
                types.TextDocumentItem(
                    uri=uri,
                    language_id=document.language_id or "",
                    version=params.text_document.version,
                    text=text,
                )
            )
        else:
            logger.debug("didChange of %s, which is not open: ignored", uri)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None


class NexoLanguageServer(LanguageServer):
    """A pygls server that knows which documents are nexo files and lints them."""

    def __init__(self, *, debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS) -> None:
        super().__init__(
            "nexo-pkg",
            __version__,
            protocol_cls=_Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
        )
        self.debounce_seconds = debounce_seconds
        self._pending: dict[str, asyncio.Task[None]] = {}
        # Per document, the lint settings failures last said in the editor.
        self.settings_problems_said: dict[str, tuple[str, ...]] = {}
        # One worker: lints run in order, off the event loop, so hover and completion stay
        # responsive while a large manifest is being checked.
        self._lint_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nexo-lint")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message body that is not JSON (or not UTF-8, or nested deeper than the JSON
        reader goes) is answered as JSON-RPC says: a ``-32700`` parse error with a null id,
        not a pop-up in the editor; the session goes on. Other failures are reported as pygls
        does."""
        if isinstance(error, (ValueError, RecursionError)) and source is JsonRpcException:
            # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors; json raises
            # RecursionError for nesting past the interpreter's limit.
            # Sent as a plain document: JSON-RPC wants `"id": null`, which pygls would omit.
            self.protocol._send_data(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": JsonRpcParseError.CODE,
                        "message": f"the message is not JSON: {error}",
                    },
                }
            )
            return
        super().report_server_error(error, source)

    @property
    def encoding(self) -> Encoding:
        """The position encoding negotiated with the client (UTF-16 unless it offered more)."""
        try:
            value = self.workspace.position_encoding
        except RuntimeError:  # before `initialize`
            return "utf-16"
        return normalise_encoding(str(getattr(value, "value", value)))

    def snapshot(self, uri: str) -> _Snapshot | None:
        """The open document at ``uri`` if it is a nexo file, else ``None``."""
        kind = document_kind(uri)
        if kind is None or unquote(uri) not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        return _Snapshot(uri, kind, document.source, document.version)

    def schedule_lint(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, cancelling a pending lint of the same URI."""
        self.cancel_lint(uri)
        task = asyncio.get_running_loop().create_task(self._lint_later(uri, delay))
        self._pending[uri] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._pending.get(uri) is done:
                del self._pending[uri]

        task.add_done_callback(forget)

    def watch_files_on_disk(self) -> None:
        """Ask the client to report changes of the files on disk a lint reads besides the
        document (:data:`WATCHED_NAMES`), when it can register watchers dynamically; a client
        that cannot is left alone (the next edit or save re-lints)."""
        capabilities = self.client_capabilities.workspace
        watched = capabilities.did_change_watched_files if capabilities is not None else None
        if watched is None or not watched.dynamic_registration:
            return
        registration = types.Registration(
            id="nexo-lint-inputs",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[
                    types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in WATCHED_NAMES
                ]
            ),
        )

        def done(error: Any) -> None:
            if error is not None:
                logger.warning("the client refused the file watchers: %s", error)

        self.client_register_capability(
            types.RegistrationParams(registrations=[registration]), callback=done
        )

    def files_changed_on_disk(self, changes: Sequence[types.FileEvent]) -> None:
        """Lint every open nexo document again now when one of the ``changes`` is to a file a
        lint reads besides the document (:data:`WATCHED_NAMES`)."""
        names = {posixpath.basename(unquote(urlparse(change.uri).path)) for change in changes}
        if names & set(WATCHED_NAMES):
            self.relint_open_documents()

    def relint_open_documents(self) -> None:
        """Lint every open nexo document again now (a file it depends on changed on disk)."""
        # Under the URI the client opened it with (the workspace keys them unquoted).
        for document in list(self.workspace.text_documents.values()):
            if document_kind(document.uri) is not None:
                self.schedule_lint(document.uri, 0)

    def cancel_lint(self, uri: str) -> None:
        """Drop the pending lint of ``uri``, if any (the document closed)."""
        previous = self._pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

    async def _lint_later(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            snapshot = self.snapshot(uri)
            if snapshot is None:
                return
            encoding = self.encoding
            loop = asyncio.get_running_loop()
            diagnostics, problems = await loop.run_in_executor(
                self._lint_pool, self._diagnose_noting, snapshot, encoding
            )
            current = self.snapshot(uri)
            if current is None or current.version != snapshot.version:
                return  # A newer version is on its way (or the document closed).
            self._tell_settings_problems(uri, problems)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, diagnostics=diagnostics, version=snapshot.version
                )
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # a lint failure must not end the session
            logger.exception("linting %s failed", uri)
            message = f"nexo: linting {uri} failed; see the server log"
            logger.error("%s", message)
            try:  # and in the editor's output panel
                self.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Error, message=message)
                )
            except Exception:  # reporting a failure must not fail in turn
                logger.exception("could not send window/logMessage")

    def _tell_settings_problems(self, uri: str, problems: tuple[str, ...]) -> None:
        """Say in the editor's output panel that the lint settings for ``uri`` could not be
        read (where ``nexo plugin lint`` refuses to run), once until what is wrong changes,
        not after every edit."""
        if problems == self.settings_problems_said.get(uri, ()):
            return
        self.settings_problems_said[uri] = problems
        for problem in problems:
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Warning,
                    message=f"nexo: {problem}; linted with every rule",
                )
            )

    @classmethod
    def _diagnose_noting(
        cls, snapshot: _Snapshot, encoding: Encoding
    ) -> tuple[list[types.Diagnostic], tuple[str, ...]]:
        """:meth:`_diagnose`, and the lint settings failures met on the way."""
        noted: list[str] = []
        _settings_problems.found = noted
        try:
            return cls._diagnose(snapshot, encoding), tuple(noted)
        finally:
            del _settings_problems.found

    @staticmethod
    def _diagnose(snapshot: _Snapshot, encoding: Encoding) -> list[types.Diagnostic]:
        found = lint_text(snapshot.kind, snapshot.text, _document_path(snapshot.uri))
        # The YAML reader ends lines where LSP does; TOML's reader at line feeds only.
        index = LineIndex(
            snapshot.text, engine_lines="lsp" if snapshot.kind == "daemon-config" else "toml"
        )
        return [to_lsp_diagnostic(item, index, encoding) for item in found]

    def warm_up(self) -> None:
        """Import the lint engine's lazy parts and load the schemas before the first edit."""

        def work() -> None:
            lint_source("", path=CANONICAL_MANIFEST_NAME)
            packaged_navigator(MANIFEST_SCHEMA)
            packaged_navigator(POLICY_SCHEMA)

        def report(done: Future[None]) -> None:
            if done.exception() is not None:
                logger.warning("warm-up failed: %s", done.exception())

        self._lint_pool.submit(work).add_done_callback(report)


MICROAPP_SCHEMA = "microapp-manifest.schema.json"
# A microapp manifest's marks, read from text that does not parse (half-typed): a root
# `[transport]` or `[capabilities]` table, and neither mark of a unified plugin manifest.
_MICROAPP_TABLE = re.compile(r"^[ \t]*\[[ \t]*(?:transport|capabilities)[ \t]*\]", re.MULTILINE)
_UNIFIED_MARK = re.compile(
    r"^[ \t]*(?:manifest_version[ \t]*=|\[[ \t]*plugin[ \t]*\.[ \t]*entrypoint\b)", re.MULTILINE
)


def _is_microapp(text: str, path: str) -> bool:
    """Whether lint reads the manifest ``text`` at ``path`` with the daemon's extension
    manifest parser (a microapp's ``plugin.toml``), so its help comes from that schema."""
    if Path(path).name == COMPANION_MANIFEST_NAME:
        return False
    try:
        data = read_manifest_text(text)
    except ManifestTOMLError:
        return bool(_MICROAPP_TABLE.search(text)) and not _UNIFIED_MARK.search(text)
    return is_extension_shape(data)


def _schema_position(
    ls: NexoLanguageServer, params: types.HoverParams | types.CompletionParams
) -> tuple[SchemaNavigator, str, LineIndex, int, bool] | None:
    """The schema navigator, text, line index and offset of a position in an open nexo
    document, and whether it is one of the daemon's YAML files; ``None`` when the document is
    not one or its schema is not shipped."""
    snapshot = ls.snapshot(params.text_document.uri)
    if snapshot is None or _over_the_cap(snapshot.text):
        return None
    is_yaml = snapshot.kind == "daemon-config"
    if is_yaml:
        yaml_kind = config_kind(_document_path(snapshot.uri), snapshot.text)
        navigator = None if yaml_kind is None else yaml_help.yaml_navigator(yaml_kind)
    elif snapshot.kind == "manifest" and _is_microapp(
        _mark_as_space(snapshot.text), _document_path(snapshot.uri)
    ):
        navigator = packaged_navigator(MICROAPP_SCHEMA)
    else:
        navigator = navigator_for(snapshot.kind)
    if navigator is None:
        return None
    index = LineIndex(snapshot.text)
    line, column = index.from_client(params.position.line, params.position.character, ls.encoding)
    return navigator, _mark_as_space(snapshot.text), index, index.offset(line, column), is_yaml


def _over_the_cap(text: str) -> bool:
    """Whether ``text`` is larger in UTF-8 than the files nexo-pkg reads (its one finding is
    then NX004): hover and completion do not read it either. A text of more characters than
    the cap is over it without encoding it."""
    return len(text) > MAX_MANIFEST_BYTES or (
        len(text) * 4 > MAX_MANIFEST_BYTES
        and len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES
    )


def create_server(*, debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS) -> NexoLanguageServer:
    """Build the server with every feature registered; :meth:`start_io` runs it."""
    server = NexoLanguageServer(debounce_seconds=debounce_seconds)

    @server.feature(types.INITIALIZED)
    @_guarded
    def initialized(ls: NexoLanguageServer, params: types.InitializedParams) -> None:
        del params
        ls.warm_up()
        ls.watch_files_on_disk()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_guarded
    def did_change_watched_files(
        ls: NexoLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.files_changed_on_disk(params.changes)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @_guarded
    def did_open_or_save(
        ls: NexoLanguageServer,
        params: types.DidOpenTextDocumentParams | types.DidSaveTextDocumentParams,
    ) -> None:
        if document_kind(params.text_document.uri) is not None:
            ls.schedule_lint(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @_guarded
    def did_change(ls: NexoLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if document_kind(params.text_document.uri) is not None:
            ls.schedule_lint(params.text_document.uri, ls.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @_guarded
    def did_close(ls: NexoLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if document_kind(uri) is not None:
            ls.cancel_lint(uri)
            ls.settings_problems_said.pop(uri, None)
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_guarded
    def on_hover(ls: NexoLanguageServer, params: types.HoverParams) -> types.Hover | None:
        at = _schema_position(ls, params)
        if at is None:
            return None
        navigator, text, index, offset, is_yaml = at
        found = (yaml_help.hover_yaml if is_yaml else hover.hover_at)(navigator, text, offset)
        if found is None:
            return None
        markdown, (start, end) = found
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=offsets_to_range(index, start, end, ls.encoding),
        )

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["[", ".", '"', "=", " "]),
    )
    @_guarded
    def on_completion(
        ls: NexoLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        at = _schema_position(ls, params)
        if at is None:
            return None
        navigator, text, index, offset, is_yaml = at
        complete = yaml_help.complete_yaml if is_yaml else completion.complete_at
        candidates = complete(navigator, text, offset)
        items = [_completion_item(candidate, index, ls.encoding) for candidate in candidates]
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    @_guarded
    def on_code_action(
        ls: NexoLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        snapshot = ls.snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        index = LineIndex(snapshot.text)
        found: list[types.CodeAction] = []
        for diagnostic in params.context.diagnostics:
            if diagnostic.source != "nexo" or not isinstance(diagnostic.code, str):
                continue
            data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
            start, end = (
                index.offset(*index.from_client(position.line, position.character, ls.encoding))
                for position in (diagnostic.range.start, diagnostic.range.end)
            )
            subject = data.get("subject")
            if not isinstance(subject, str):
                continue  # no fix was reported with the finding: offer none
            name = str(data.get("name", ""))
            for fix in code_actions.fixes_for(
                _mark_as_space(snapshot.text),
                start,
                end,
                code=diagnostic.code,
                name=name,
                help_text=str(data.get("help", "")),
                subject=subject,
            ):
                edits = [
                    types.TextEdit(
                        range=offsets_to_range(index, edit_start, edit_end, ls.encoding),
                        new_text=new_text,
                    )
                    for edit_start, edit_end, new_text in fix.edits
                ]
                found.append(
                    types.CodeAction(
                        title=code_actions.titled(fix, diagnostic.code, name),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        # An editor may apply a preferred fix unasked ("fix all"): never an
                        # unsafe one.
                        is_preferred=(fix.preferred and fix.applicability == "safe") or None,
                        edit=types.WorkspaceEdit(changes={params.text_document.uri: edits}),
                    )
                )
        return found

    return server


_KINDS = {
    "table": types.CompletionItemKind.Module,
    "key": types.CompletionItemKind.Property,
    "value": types.CompletionItemKind.EnumMember,
}


def _completion_item(
    candidate: completion.Candidate, index: LineIndex, encoding: Encoding
) -> types.CompletionItem:
    start, end = candidate.replace
    documentation = (
        types.MarkupContent(kind=types.MarkupKind.Markdown, value=candidate.documentation)
        if candidate.documentation
        else None
    )
    return types.CompletionItem(
        label=candidate.label,
        kind=_KINDS[candidate.kind],
        detail=candidate.detail or None,
        documentation=documentation,
        sort_text=f"{candidate.order:04d}",
        filter_text=candidate.filter_text,
        text_edit=types.TextEdit(
            range=offsets_to_range(index, start, end, encoding), new_text=candidate.insert
        ),
    )


#: The largest message body the server reads (a manifest is a few KiB; editors send the whole
#: document on each change) and the longest header line.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_LINE_BYTES = 64 * 1024


# A Content-Length header as clients write it: any case (HTTP header names are), any spaces,
# perhaps glued to the end of the line before it (the body of a message whose header could
# not be read has no line break of its own).
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\S*)[ \t]*\r?\n?\Z", re.IGNORECASE)


#: What the reader hands pygls in place of a body it refused itself: a notification the
#: protocol drops without a word (:meth:`_Protocol.handle_message`).
_REFUSED = "$/nexo/refused"
_REFUSED_BODY = json.dumps({"jsonrpc": "2.0", "method": _REFUSED}).encode()
_CONSTANT_WORDS = (b"NaN", b"Infinity")


class _NonJsonConstantError(ValueError):
    """Python's JSON reader met ``NaN``, ``Infinity`` or ``-Infinity``."""


def _refuse_constant(word: str) -> Any:
    raise _NonJsonConstantError(word)


def _non_json_constant(body: bytes) -> str | None:
    """The first ``NaN``/``Infinity``/``-Infinity`` literal of ``body`` (Python's JSON reader
    takes them, RFC 8259 has no such values), or ``None``. Only a body that spells one of the
    words somewhere (a string may) is read a second time, strictly."""
    if not any(word in body for word in _CONSTANT_WORDS):
        return None
    try:
        json.loads(body, parse_constant=_refuse_constant)
    except _NonJsonConstantError as found:
        return str(found)
    except (ValueError, RecursionError):
        return None  # not JSON for another reason: pygls's reader answers that
    return None


class CappedReader:
    """stdin for pygls's reader with a cap on what one message may ask it to read.

    A ``Content-Length`` above :data:`MAX_MESSAGE_BYTES` is answered with a JSON-RPC error
    (``-32600``, no id: the body was never read) and reads as end of input, so the server
    stops cleanly instead of allocating what the header asks for; so is one with more digits
    than the limit has (leading zeros aside), before any of them is converted to a number.

    The ``Content-Length`` header is handed to pygls in the one spelling it reads
    (``Content-Length: N``), whatever the case and spacing the client used. One whose value
    is not a number is answered with a parse error (``-32700``, no id); that message is lost,
    and the next one is read again from its header. So is a ``Content-Length: 0`` (an empty
    body is no JSON text), a body with a ``NaN``, ``Infinity`` or ``-Infinity`` literal,
    which Python's JSON reader would take (RFC 8259, which JSON-RPC builds on, has no such
    values), and a body in UTF-16 or UTF-32, which that reader would also take (LSP's base
    protocol has one charset, UTF-8; a UTF-8 byte order mark is ignored, as RFC 8259 allows);
    the session goes on.
    """

    def __init__(self, stream: BinaryIO, output: BinaryIO, *, limit: int = MAX_MESSAGE_BYTES):
        self.stream = stream
        self.output = output
        self.limit = limit

    def readline(self) -> bytes:
        line = self.stream.readline(MAX_HEADER_LINE_BYTES)
        found = _CONTENT_LENGTH.search(line)
        if found is None:
            return line
        value = found.group(1)
        # Leading zeros dropped, so that the digits counted are the number's (and Python's
        # int() never meets its 4300-digit limit on either side of pygls).
        digits = value.lstrip(b"0") if value.isdigit() else value
        if value.isdigit() and len(digits) > len(str(self.limit)):
            logger.error(
                "refusing a message whose length has %d digits (limit %d bytes)",
                len(digits),
                self.limit,
            )
            self._refuse(
                -32600,
                f"a message length of {len(digits)} digits exceeds the {self.limit}-byte limit",
            )
            return b""
        if digits and value.isdigit():
            return b"Content-Length: %s\r\n" % digits
        if value.isdigit():
            # An empty body is no JSON text; pygls would skip it without a word.
            logger.error("a message of 0 bytes is refused")
            self._refuse(-32700, "the message is empty, which is not JSON")
        else:
            logger.error("unreadable Content-Length header %r: the message is skipped", line[-80:])
            self._refuse(-32700, "the Content-Length header is not a number of bytes")
        return b"X-Unreadable-Header: skipped\r\n"

    def read(self, size: int) -> bytes:
        if size > self.limit:
            logger.error("refusing a message of %d bytes (limit %d)", size, self.limit)
            self._refuse(-32600, f"message of {size} bytes exceeds the {self.limit}-byte limit")
            return b""
        body = self.stream.read(size)
        charset = json.detect_encoding(body)
        if charset not in {"utf-8", "utf-8-sig"}:
            logger.error("a message in %s, which is not UTF-8, is refused", charset)
            self._refuse(
                -32700, f"the message is not JSON in UTF-8, LSP's one charset (it is {charset})"
            )
            return _REFUSED_BODY
        constant = _non_json_constant(body)
        if constant is None:
            return body
        logger.error("a message with %s, which is not JSON, is refused", constant)
        self._refuse(-32700, f"the message is not JSON: {constant} is not a JSON value")
        return _REFUSED_BODY

    def _refuse(self, code: int, message: str) -> None:
        """Write a JSON-RPC error with a null id (no request can be named) to the client."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
        ).encode()
        with contextlib.suppress(OSError, ValueError):
            self.output.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            self.output.flush()


def serve(*, debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS) -> int:
    """Run the language server on stdin/stdout until the client says ``exit`` (or closes
    stdin); return the exit status: 1 for an ``exit`` that no ``shutdown`` preceded, as LSP
    says, and for input that ends with neither, else 0."""
    output = sys.stdout.buffer
    descriptor = output.fileno()
    # pygls only calls readline() and read(n), which is all CappedReader offers.
    reader = cast("BinaryIO", CappedReader(sys.stdin.buffer, output))
    server = create_server(debounce_seconds=debounce_seconds)
    server.start_io(stdin=reader, stdout=output)
    protocol = cast("_Protocol", server.protocol)
    if protocol.client_gone:
        # Nothing may reach the closed pipe at exit either (the interpreter flushes stdout).
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, descriptor)
            os.close(devnull)
    return protocol.final_status
