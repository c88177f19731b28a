"""Error frames (spec-eval.md E29, P7): tracebacks that show the user's code only.

Loaded on a cell's first error. Frames of the kernel's own files (runner, magics, prelude, ...)
and of asyncio's machinery are left out, in the exception and in every exception chained to it.
"""

import os

ASYNCIO_DIR = os.path.join(os.path.dirname(os.__file__), "asyncio") + os.sep


def internal_frame(filename, here):
    """The kernel's own files (runner, magics, prelude, ...) and asyncio's internals: not the
    user's code, so left out of tracebacks."""
    return os.path.dirname(filename) == here or filename.startswith(ASYNCIO_DIR)


def clean_traceback(tb, here):
    """Drops kernel and asyncio frames above the first cell frame."""
    first = tb
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<cell-"):
            return tb
        tb = tb.tb_next
    while first is not None and internal_frame(first.tb_frame.f_code.co_filename, here):
        first = first.tb_next
    return first


def strip_internal(te, here, seen=None):
    """Removes internal frames from a TracebackException and the exceptions chained to it."""
    import traceback

    seen = set() if seen is None else seen
    while te is not None and id(te) not in seen:
        seen.add(id(te))
        kept = [f for f in te.stack if not internal_frame(f.filename, here)]
        te.stack = traceback.StackSummary.from_list(kept)
        if te.__cause__ is not None:
            strip_internal(te.__cause__, here, seen)
        te = te.__context__


def error_frame(cid, exc, here, limit=None):
    """The ``error`` frame of exc for cell ``cid``; ``here`` is the kernel's directory."""
    import traceback

    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        tb = clean_traceback(exc.__traceback__, here)
        te = traceback.TracebackException(type(exc), exc, tb, limit=limit)
        # The SIGINT handler, magics, the prelude and asyncio's machinery are not the user's
        # code.
        strip_internal(te, here)
        lines = list(te.format())
    text = "".join(lines).rstrip("\n").split("\n")
    try:
        evalue = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not kill the kernel
        evalue = "<unprintable %s>" % type(exc).__name__
    return {"type": "error", "id": cid, "ename": type(exc).__name__, "evalue": evalue,
            "traceback": text}
