"""Two fixes for the debugpy processes execkit starts (adapter, launcher and debuggee).

TCP_NODELAY on the socket pydevd uses to talk to the debugpy adapter.

execkit puts this directory first on PYTHONPATH of the debugpy adapters it starts; the
adapter's launcher passes its environment on to the debuggee. pydevd writes each DAP message
in small pieces and its socket keeps Nagle's algorithm on, so every request waits ~40 ms for a
delayed ACK (debugpy issue 2054). Only pydevd's `start_client` is wrapped, once its module is
imported; user code and its sockets are untouched. The user's own `sitecustomize`, if any, is
imported afterwards as if this file were not there, and this directory leaves `sys.path`.

No environment report nobody reads. debugpy 1.8 builds its "environment" log entry (every
installed distribution, read through importlib.metadata) at each start, even with logging
off; in the debuggee this runs under pydevd's tracer after `configurationDone` and before the
program's first line, which put the stop-on-entry event 3-4 s late with ~130 packages
installed. `describe_environment` is skipped unless the process was told to log
(`DEBUGPY_LOG_DIR`, `--log-to`, `--log-dir`), so debugpy's own logs keep the full report.
"""

import importlib
import importlib.abc
import importlib.util
import os
import socket
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_COMM = "_pydevd_bundle.pydevd_comm"
_LOG = "debugpy.common.log"


def _nodelay(connect):
    def start_client(*args, **kwargs):
        sock = connect(*args, **kwargs)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (AttributeError, OSError):
            pass
        return sock

    return start_client


def _patch_comm(module):
    if hasattr(module, "start_client"):
        module.start_client = _nodelay(module.start_client)


def _debugpy_logs():
    """True when this debugpy process writes a log, which should keep the full report."""
    flags = ("--log-to", "--log-to-stderr", "--log-dir", "--log-stderr")
    return bool(os.environ.get("DEBUGPY_LOG_DIR")) or any(a in flags for a in sys.argv)


def _patch_log(module):
    if hasattr(module, "describe_environment") and not _debugpy_logs():
        # A builtin, not a Python function: pydevd's stop-on-entry halts at the first Python
        # line it traces, and a wrapper here would be that line instead of the program's.
        module.describe_environment = id


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Runs `patch` on module `target` right after it has been executed."""

    def __init__(self, target, patch):
        self._target = target
        self._patch = patch

    def find_spec(self, name, path=None, target=None):
        if name != self._target:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        original = spec.loader.exec_module
        patch = self._patch

        def exec_module(module):
            original(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


def _patch_when_imported(target, patch):
    if target in sys.modules:
        patch(sys.modules[target])
    else:
        sys.meta_path.insert(0, _PatchOnImport(target, patch))


def _chain_user_sitecustomize():
    """Imports the next `sitecustomize` on the path, the one this file would shadow."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    this = sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        if this is not None:
            sys.modules["sitecustomize"] = this


_patch_when_imported(_COMM, _patch_comm)
_patch_when_imported(_LOG, _patch_log)
_chain_user_sitecustomize()
