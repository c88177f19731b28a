"""Type stubs of the execkit package."""

from collections.abc import Mapping
from typing import Any

from ._native import Approval as Approval
from ._native import ApprovalRequest as ApprovalRequest
from ._native import ApproveCallback as ApproveCallback
from ._native import CallHandle as CallHandle
from ._native import Format as Format
from ._native import Progress as Progress
from ._native import ProgressCallback as ProgressCallback
from ._native import SandboxMode as SandboxMode
from ._native import Toolkit as _NativeToolkit
from ._native import ToolResult as ToolResult

__version__: str
FORMATS: tuple[str, ...]

class Toolkit(_NativeToolkit):
    """Runs execkit tools in this process.

    ``call(name, args)`` runs one tool call with the GIL released and returns its result; a
    Ctrl-C kills the call's process tree, then raises ``KeyboardInterrupt``. ``close()`` (or
    leaving a ``with`` block, or garbage collection) kills every job and process it started.
    """

    async def acall(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> ToolResult: ...
