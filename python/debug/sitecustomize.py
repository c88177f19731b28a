"""Sets TCP_NODELAY on the socket pydevd uses to talk to the debugpy adapter.

execkit puts this directory first on PYTHONPATH of the debugpy adapters it starts; the
adapter's launcher passes its environment on to the debuggee. pydevd writes each DAP message
in small pieces and its socket keeps Nagle's algorithm on, so every request waits ~40 ms for a
delayed ACK (debugpy issue 2054). Only pydevd's `start_client` is wrapped, once its module is
imported; user code and its sockets are untouched. The user's own `sitecustomize`, if any, is
imported afterwards as if this file were not there, and this directory leaves `sys.path`.
"""

import importlib
import importlib.abc
import importlib.util
import os
import socket
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_TARGET = "_pydevd_bundle.pydevd_comm"


def _nodelay(connect):
    def start_client(*args, **kwargs):
        sock = connect(*args, **kwargs)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (AttributeError, OSError):
            pass
        return sock

    return start_client


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Wraps `start_client` right after pydevd's comm module has run."""

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            if hasattr(module, "start_client"):
                module.start_client = _nodelay(module.start_client)

        spec.loader.exec_module = exec_module
        return spec


def _chain_user_sitecustomize():
    """Imports the next `sitecustomize` on the path, the one this file would shadow."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    this = sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        if this is not None:
            sys.modules["sitecustomize"] = this


if _TARGET in sys.modules:
    _comm = sys.modules[_TARGET]
    _comm.start_client = _nodelay(_comm.start_client)
else:
    sys.meta_path.insert(0, _PatchOnImport())
_chain_user_sitecustomize()
