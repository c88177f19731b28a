"""execkit Python prelude: helpers installed into every eval kernel's namespace.

Executed by the kernel (``python/kernel/runner.py``) with ``_kernel`` bound to the runner's
kernel object; only the names in ``__all__`` reach the user namespace. Relative paths resolve
against the kernel's current working directory. Standard library only, Python 3.8+.
"""

import os

__all__ = ["display", "read", "write", "append", "env", "tool", "ToolResult", "ToolError"]

_kernel = globals().get("_kernel")


def display(*objs, raw=False):
    """Shows each object as one display, choosing its richest representation."""
    for obj in objs:
        if raw:
            if not isinstance(obj, dict):
                raise TypeError("display(raw=True) takes {mime: data} dicts")
            _kernel.display_bundle(dict(obj))
        else:
            _kernel.display_value(obj)


def read(path, offset=1, limit=None):
    """UTF-8 text of lines offset..offset+limit-1 (1-based); invalid bytes are replaced."""
    path = os.path.expanduser(path)
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    if offset < 1:
        raise ValueError("offset starts at 1")
    out = []
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        for number, line in enumerate(f, 1):
            if number < offset:
                continue
            if limit is not None and number >= offset + limit:
                break
            out.append(line)
    return "".join(out)


def _put(path, content, mode):
    path = os.path.abspath(os.path.expanduser(path))
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    elif not isinstance(content, (bytes, bytearray, memoryview)):
        raise TypeError("content must be str or bytes, not %s" % type(content).__name__)
    with open(path, mode) as f:
        f.write(content)
    return path


def write(path, content):
    """Writes str (UTF-8) or bytes, creating parent directories; returns the absolute path."""
    return _put(path, content, "wb")


def append(path, content):
    """Appends str (UTF-8) or bytes, creating the file if needed; returns the absolute path."""
    return _put(path, content, "ab")


def env(name=None, value=None):
    """No args: a sorted copy of os.environ. name: its value or None. name, value: sets it."""
    if name is None:
        return dict(sorted(os.environ.items()))
    if value is None:
        return os.environ.get(name)
    os.environ[name] = str(value)
    return os.environ[name]


class ToolResult:
    """The result of an execkit tool called from a cell."""

    def __init__(self, raw):
        self.raw = raw if isinstance(raw, dict) else {}
        content = self.raw.get("content") or []
        texts = [b.get("text", "") for b in content
                 if isinstance(b, dict) and b.get("type") == "text"]
        self.text = "\n".join(texts)
        self.is_error = bool(self.raw.get("isError"))
        self.structured = self.raw.get("structuredContent")
        self.images = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "image":
                import base64

                try:
                    data = base64.b64decode(block.get("data", ""))
                except (ValueError, TypeError):
                    continue
                self.images.append((block.get("mimeType", ""), data))

    def __str__(self):
        return self.text

    def __repr__(self):
        return "ToolResult(is_error=%r, text=%r)" % (self.is_error, self.text[:200])


class ToolError(Exception):
    """A failed tool result, a refused call or a missing reply; .result holds the result."""

    def __init__(self, message, result=None):
        Exception.__init__(self, message)
        self.result = result


class _Tools:
    """tool.<name>(args) runs an execkit tool through the host."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(args=None, /, **kw):
            payload = dict(args or {})
            payload.update(kw)
            kind, value = _kernel.call_tool(name, payload)
            if kind == "error":
                raise ToolError(value)
            result = ToolResult(value)
            if result.is_error:
                first = result.text.splitlines()[0] if result.text else "tool failed"
                raise ToolError("tool.%s failed: %s" % (name, first), result)
            return result

        call.__name__ = name
        return call

    def __dir__(self):
        return list(_kernel.tool_names())

    def __repr__(self):
        return "<execkit tools: %s>" % ", ".join(_kernel.tool_names())


tool = _Tools()
