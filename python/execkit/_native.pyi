"""Type stubs of the native module (crates/execkit-py)."""

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Literal, Self

__version__: str

Format = Literal["mcp", "openai", "anthropic", "gemini"]
ToolResult = dict[str, Any]
"""``{"content": [...], "structuredContent": {...}, "isError": bool}`` (MCP CallToolResult)."""
Progress = dict[str, Any]
"""``{"progress", "total"?, "message", "elapsed_ms", "total_bytes", "total_lines", "tail"}``."""
ProgressCallback = Callable[[Progress], Any]
SandboxMode = Literal["off", "read-only", "workspace-write"]
ApprovalRequest = dict[str, str]
"""``{"command", "justification", "message"}``: a bash call asking to run outside the sandbox."""
Approval = Literal["once", "session", "decline"] | bool | None
"""``True`` is ``"once"``; ``False`` and ``None`` decline."""
ApproveCallback = Callable[[ApprovalRequest], Approval]

class CallHandle:
    def cancel(self) -> None: ...

class Toolkit:
    formats: tuple[str, ...]
    def __new__(
        cls,
        cwd: str | PathLike[str] | None = None,
        *,
        vars: Mapping[str, str] | None = None,
        one_shot: bool = False,
        subreaper: bool = False,
        progress: ProgressCallback | None = None,
        sandbox: SandboxMode | None = None,
        network: Literal["on", "off"] | None = None,
        writable: Sequence[str | PathLike[str]] | None = None,
        protect: Sequence[str | PathLike[str]] | None = None,
        deny_read: Sequence[str | PathLike[str]] | None = None,
        approve: ApproveCallback | None = None,
    ) -> Self: ...
    def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> ToolResult: ...
    def start(
        self,
        name: str,
        args: Mapping[str, Any] | None,
        done: Callable[[ToolResult], Any],
        *,
        progress: ProgressCallback | None = None,
    ) -> CallHandle: ...
    def tools(self, format: Format = "mcp") -> list[dict[str, Any]]: ...
    def read_artifact(
        self,
        uri: str,
        *,
        lines: str | None = None,
        head: int | None = None,
        tail: int | None = None,
        grep: str | None = None,
        context: int | None = None,
        max: int | None = None,
        raw: bool = False,
    ) -> str | bytes: ...
    def doctor(self) -> dict[str, list[str]]: ...
    @property
    def cwd(self) -> Path: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...
