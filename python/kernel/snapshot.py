"""Parking snapshots (spec-eval.md P19): save a kernel's user state to a file, restore it later.

Modules are recorded with their aliases and re-imported; functions and classes defined in cells
are recorded as source (from linecache) and re-run in definition order; other values are
pickled (protocol 4). Everything else is listed in ``skipped`` with its reason.
"""

import os
import pickle
import time
import types

VALUE_MAX = 64 * 1024 * 1024
TOTAL_MAX = 512 * 1024 * 1024
BUDGET_S = 10.0


def _class_source(cls):
    """The newest top-level ``class <name>`` in a cell, from linecache (classes keep no code)."""
    import ast
    import linecache

    cells = [k for k in linecache.cache if isinstance(k, str) and k.startswith("<cell-")]
    cells.sort(key=lambda k: int(k[6:-1]) if k[6:-1].isdigit() else 0, reverse=True)
    for name in cells:
        lines = linecache.cache[name][2]
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                return "".join(lines[start - 1:node.end_lineno])
    return None


def _cell_source(obj):
    import inspect

    if isinstance(obj, type):
        return _class_source(obj) if obj.__module__ == "__main__" else None
    code = getattr(obj, "__code__", None)
    filename = code.co_filename if code is not None else None
    if filename is None:
        try:
            filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
        except (TypeError, OSError):
            return None
    if not str(filename).startswith("<cell-"):
        return None
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return None


def save(kernel, cmd):
    started = time.monotonic()
    entries, saved, skipped, total = [], [], [], 0
    for name in kernel.user_names_all():
        value = kernel.ns[name]
        if time.monotonic() - started > BUDGET_S:
            skipped.append({"name": name, "reason": "snapshot budget"})
            continue
        if isinstance(value, types.ModuleType):
            entries.append(("module", name, value.__name__))
            saved.append(name)
            continue
        if isinstance(value, (types.FunctionType, type)):
            source = _cell_source(value)
            if source is not None:
                entries.append(("source", name, source))
                saved.append(name)
                continue
        try:
            data = pickle.dumps(value, protocol=4)
        except Exception:  # noqa: BLE001 - every unpicklable value is reported
            skipped.append({"name": name, "reason": "cannot be pickled"})
            continue
        if len(data) > VALUE_MAX or total + len(data) > TOTAL_MAX:
            skipped.append({"name": name, "reason": "snapshot budget"})
            continue
        total += len(data)
        entries.append(("value", name, data))
        saved.append(name)
    path = cmd.get("path")
    tmp = "%s.tmp" % path
    with open(tmp, "wb") as f:
        pickle.dump(entries, f, protocol=4)
    os.replace(tmp, path)
    return {"type": "snapshot_done", "id": cmd.get("id"), "saved": saved, "skipped": skipped,
            "bytes": os.path.getsize(path)}


_restored_count = [0]


def _run_restored_source(kernel, source):
    """Runs a saved definition under a ``<cell-restored-N>`` filename registered in linecache,
    so the next snapshot finds its source again and a second park/restore works."""
    import linecache
    import textwrap

    _restored_count[0] += 1
    filename = "<cell-restored-%d>" % _restored_count[0]
    source = textwrap.dedent(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec", dont_inherit=True), kernel.ns)


def restore(kernel, cmd):
    import importlib

    restored, failed = [], []
    try:
        with open(cmd.get("path"), "rb") as f:
            entries = pickle.load(f)
    except Exception as exc:  # noqa: BLE001
        return {"type": "restore_done", "id": cmd.get("id"), "restored": [],
                "failed": [{"name": "*", "reason": "snapshot unreadable: %s" % exc}]}
    # Modules and sources first (values may reference cell classes), then values.
    order = {"module": 0, "source": 1, "value": 2}
    for kind, name, payload in sorted(entries, key=lambda e: order.get(e[0], 3)):
        try:
            if kind == "module":
                kernel.ns[name] = importlib.import_module(payload)
            elif kind == "source":
                _run_restored_source(kernel, payload)
            else:
                kernel.ns[name] = pickle.loads(payload)
            restored.append(name)
        except Exception as exc:  # noqa: BLE001
            failed.append({"name": name, "reason": "%s: %s" % (type(exc).__name__, exc)})
    return {"type": "restore_done", "id": cmd.get("id"), "restored": restored, "failed": failed}
