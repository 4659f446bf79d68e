"""The pygls server: lifecycle, capabilities, the session of the connected editor.

Implements ``initialize`` (with ``capabilities.experimental.sCode``), text document sync (pygls'
built-in workspace keeps every open buffer's text), workspace folders, and clean shutdown. The
``s-code/*`` methods are bound in :mod:`s_code.lsp.handlers`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError, JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from s_code import __version__
from s_code.approvals.policy import MODES
from s_code.lsp.converter import raw_converter
from s_code.lsp.editor import LspEditor, supports_apply_edit, supports_save
from s_code.lsp.overlay import BufferOverlay
from s_code.lsp.prompts import PromptApprover, can_show_document, wants_approval_cards
from s_code.protocol import methods

if TYPE_CHECKING:
    from s_code.session.session import Session
    from s_code.tools.registry import Registry

log = logging.getLogger(__name__)

_HEADER = b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
"""pygls' own header, byte for byte."""

PERMISSION_MODES = MODES
HOSTS_DELAY_S = 0.5


class SCodeProtocol(LanguageServerProtocol):
    _server: SCodeServer

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """``s-code/*`` results are plain JSON already: send them without pygls' cattrs pass
        (which walks every value of a large result, e.g. read_file's numbered content)."""
        if error is None and type(result) is dict:
            self._result_types.pop(msg_id, None)
            message = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            if not self._send_fast(message):
                self._send_data(message)
            return
        super()._send_response(msg_id, result, error)

    def _send_fast(self, message: dict[str, Any]) -> bool:
        """Serialize a plain-JSON message with pydantic-core once the tool layer has loaded it
        (a third of json.dumps' time for read_file's reply); False to leave it to pygls (before
        the first tool call, and for what pydantic-core refuses, e.g. a lone surrogate)."""
        core = sys.modules.get("pydantic_core")
        if core is None or self.writer is None:
            return False
        try:
            body: bytes = core.to_json(message)
        except Exception:
            return False
        try:
            self.writer.write(_HEADER % len(body) + body if self._include_headers else body)
        except BrokenPipeError:
            log.exception("the editor closed the connection")
            raise
        except Exception as exc:  # as pygls' _send_data: logged, never a second reply
            log.exception("could not send a reply")
            self._server._report_server_error(exc, JsonRpcInternalError)
        return True

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """The editor's answer to a request s-code stopped waiting for (a prompt whose call was
        cancelled or whose agent went away, an applyEdit that timed out) is dropped: it decides
        nothing now. pygls would set it on the cancelled future and log a traceback."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            log.info("the editor answered request %s after s-code stopped waiting; dropped", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"sCode": self._server.experimental_capability()}
        return result


class SCodeServer(LanguageServer):
    def __init__(self, registry: Registry) -> None:
        super().__init__(
            "s-code",
            __version__,
            protocol_cls=SCodeProtocol,
            converter_factory=raw_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.registry = registry
        self._session: Session | None = None
        self._pending: types.InitializeParams | None = None
        self.overlay = BufferOverlay()
        self.init_warnings: list[str] = []
        self.hosts: Any = None  # s_code.tools.hosts.HostProcesses, once the session is open
        self.agents: Any = None  # s_code.lsp.agents.AgentHub: agents attached over the link

    # -- capabilities -------------------------------------------------------------------------

    def method_names(self) -> list[str]:
        names = {*methods.CONTROL_METHODS, *methods.TOOL_METHODS.values()}
        return sorted(names)

    def experimental_capability(self) -> dict[str, Any]:
        return {
            "protocolVersion": methods.PROTOCOL_VERSION,
            "methods": self.method_names(),
            "notifications": list(methods.NOTIFICATIONS),
            **_sandbox_tier(),
        }

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log background failures; never pop them up in the editor, never send a traceback.

        A failed request was already answered with its error, so it is only logged at DEBUG.
        """
        level = logging.DEBUG if source is FeatureRequestError else logging.ERROR
        log.log(level, "server error (%s): %s", getattr(source, "__name__", source), error)

    # -- the session --------------------------------------------------------------------------

    def open_session(self, params: types.InitializeParams) -> None:
        """Remember the client's parameters; the session itself is opened after the
        ``initialize`` reply (on ``initialized``, or the first request that needs it), so the
        reply waits for nothing but the capabilities."""
        self._pending = params

    @property
    def session(self) -> Session | None:
        if self._session is None and self._pending is not None:
            params, self._pending = self._pending, None
            self._session = self._build(params)
        return self._session

    def _build(self, params: types.InitializeParams) -> Session | None:
        from s_code.session.options import parse_options
        from s_code.state.store import state_dir
        from s_code.tools.host import open_session

        options, warnings = parse_options(params.initialization_options)
        self.init_warnings.extend(warnings)
        folders = _folders_of(params)
        if not folders:
            log.warning("the client named no file:// workspace folder; tools will refuse")
            return None
        self.overlay.workspace = self.workspace
        caps = params.capabilities
        session = open_session(
            folders,
            options,
            registry=self.registry,
            overlay=self.overlay,
            notify=self._notify,
            editor=LspEditor(self, supports_apply_edit(caps), supports_save(caps)),
            approver=PromptApprover(
                self,
                can_show_document(caps),
                wants_approval_cards(caps),
                cards_dir=os.path.join(state_dir(), "cards"),
            ),
        )
        if session is not None:
            from s_code.hostproc.config import unread_layers

            self.init_warnings += unread_layers([r.real_path for r in session.folders.roots])
        return session

    def start_hosts(self) -> None:
        """When there is host-process configuration, read it and start what the user trusts,
        in the background: nothing waits for a server to start. (Without any, the MCP layer
        is not even imported.)"""
        session = self.session
        if session is None or self.hosts is not None:
            return
        from s_code.hostproc.config import config_files

        if not any(os.path.lexists(p) for p in config_files(session.folders.primary.real_path)):
            return
        task = asyncio.get_running_loop().create_task(self._start_hosts_later())
        task.add_done_callback(_log_failure)

    async def _start_hosts_later(self) -> None:
        """The MCP SDK takes most of a second to import: after the client's first requests, and
        in a worker thread, so no tool call waits for it."""
        await asyncio.sleep(HOSTS_DELAY_S)
        await asyncio.to_thread(importlib.import_module, "s_code.tools.hosts")
        if self.session is not None:
            await self.host_processes().refresh()

    def host_processes(self) -> Any:
        """The session's host processes (made on first use)."""
        if self.hosts is None:
            from s_code.tools.hosts import HostProcesses

            session = self.session
            assert session is not None
            self.hosts = HostProcesses(session, self.registry, session.folders.primary.real_path)
        return self.hosts

    def start_agents(self) -> None:
        """Listen for agents (``s-code mcp``) that attach to this session, in the background."""
        session = self.session
        if session is None or self.agents is not None:
            return
        from s_code.lsp.agents import AgentHub

        self.agents = AgentHub(session)
        task = asyncio.get_running_loop().create_task(self.agents.start())
        task.add_done_callback(_log_failure)

    async def stop_agents(self) -> None:
        if self.agents is not None:
            await self.agents.close()
            self.agents = None

    async def stop_hosts(self) -> None:
        if self.hosts is not None:
            await self.hosts.close()
            self.hosts = None
        elif self._session is not None:  # no MCP layer: still SessionEnd hooks, terminals
            from s_code.tools.host import end_session

            await end_session(self._session)

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        """``s-code/*`` params are plain JSON: sent like a result, without pygls' cattrs pass
        (code mode notifies twice per child call)."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        protocol = self.protocol
        if not (isinstance(protocol, SCodeProtocol) and protocol._send_fast(message)):
            protocol.notify(method, params)

    def close_session(self) -> None:
        self._pending = None
        if self._session is not None:
            self._session.close()
            self._session = None


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("starting host processes failed: %s", task.exception())


def _folders_of(params: types.InitializeParams) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for folder in params.workspace_folders or []:
        path = to_fs_path(folder.uri) if folder.uri.startswith("file:") else None
        if path:
            found.append((path, folder.name or None))
        else:
            log.warning("skipping workspace folder %s: not a file:// URI", folder.uri)
    if not found:
        if params.root_uri and params.root_uri.startswith("file:"):
            path = to_fs_path(params.root_uri)
            if path:
                found.append((path, None))
        elif params.root_path:
            found.append((params.root_path, None))
    return found


def _sandbox_tier() -> dict[str, Any]:
    """``sandboxTier`` (1, 2 or 3) and its label and reasons, from the per-boot self-test."""
    try:
        from s_code.sandbox.tiers import current

        report = current()
    except Exception as exc:  # the self-test itself failed: no sandbox can be promised
        log.warning("the sandbox self-test failed: %s", exc)
        return {
            "sandboxTier": 3,
            "sandbox": {"tier": 3, "label": "unsandboxed", "reasons": [str(exc)]},
        }
    return {"sandboxTier": report.tier, "sandbox": report.to_wire()}
