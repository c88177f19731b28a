"""execkit: bash, Python cells and background jobs for AI agents, in-process.

Create a :class:`Toolkit`, hand ``tk.tools(format=...)`` to the model, and route each tool call
the model makes to ``tk.call(name, args)`` (or ``await tk.acall(name, args)``); the result is
the MCP ``CallToolResult`` dict the execkit MCP server and CLI return too. The tools run in the
native dispatcher (``execkit._native``) on its own threads, with the GIL released.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import weakref
from pathlib import Path
from typing import Any, Callable

from . import _native

__all__ = ["Toolkit", "FORMATS", "__version__"]
__version__: str = _native.__version__

#: The tool-definition formats ``Toolkit.tools(format=...)`` accepts.
FORMATS: tuple = tuple(_native.Toolkit.formats)

#: The JavaScript kernel shipped in the wheel; eval finds it through ``EXECKIT_JS_KERNEL``.
_BUNDLED_JS_KERNEL = Path(__file__).parent / "bin" / "execkit-js-kernel"
_JS_KERNEL_VAR = "EXECKIT_JS_KERNEL"

#: Toolkits not yet closed, closed at interpreter exit (garbage collection may never reach a
#: module-level Toolkit before the process ends).
_open: weakref.WeakSet[Toolkit] = weakref.WeakSet()


def _with_bundled_kernel(vars: dict | None) -> dict:
    """``vars`` plus the bundled JavaScript kernel, unless the caller or the environment
    already names one."""
    vars = dict(vars or {})
    named = _JS_KERNEL_VAR in vars or os.environ.get(_JS_KERNEL_VAR)
    if not named and os.access(_BUNDLED_JS_KERNEL, os.X_OK):
        vars[_JS_KERNEL_VAR] = str(_BUNDLED_JS_KERNEL)
    return vars


class Toolkit(_native.Toolkit):
    """Runs execkit tools in this process. See the type stubs for every method."""

    def __new__(cls, cwd=None, *, vars=None, **options):
        toolkit = super().__new__(cls, cwd, vars=_with_bundled_kernel(vars), **options)
        _open.add(toolkit)
        return toolkit

    async def acall(
        self,
        name: str,
        args: dict | None = None,
        *,
        progress: Callable[[dict], Any] | None = None,
    ) -> dict:
        """``call`` for asyncio. Cancelling the task kills the call's process tree; the
        ``CancelledError`` is raised once the call has ended."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def finish(result: dict) -> None:
            try:
                loop.call_soon_threadsafe(_resolve, done, result)
            except RuntimeError:  # the loop closed while the call ran
                pass

        handle = self.start(name, args, finish, progress=progress)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            handle.cancel()
            await done
            raise


def _resolve(future: asyncio.Future, result: dict) -> None:
    if not future.done():
        future.set_result(result)


@atexit.register
def _close_open_toolkits() -> None:
    for toolkit in list(_open):
        toolkit.close()
