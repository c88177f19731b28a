"""execkit Python kernel entry: the kernel's files from a bytecode cache, then ``runner.main()``.

The host starts ``python -I -B -X utf8 start.py``. ``-B`` keeps Python from writing bytecode next
to the user's modules, so without this file every kernel start would compile the kernel's ~2,000
lines again (tens of milliseconds, the larger part of a cold start). Instead each kernel file's
code object is kept in ``__pycache__`` next to it: this directory is execkit's private (0700)
cache, one per content hash of the kernel files, so nothing else writes there. An entry holds the
interpreter's bytecode magic and the source's mtime and size; any mismatch recompiles.

``runner.py`` still runs on its own (the kernel tests start it directly); it then compiles.
"""

import marshal
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The bytecode format of this interpreter, from the frozen import machinery (no import cost).
MAGIC = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER


def _cache_path(path):
    name = os.path.basename(path).rsplit(".", 1)[0]
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(HERE, "__pycache__", "%s.%s.execkit" % (name, tag))


def _store(cache, data):
    tmp = "%s.%d.tmp" % (cache, os.getpid())
    try:
        os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(tmp, flags, 0o600), "wb") as f:
            f.write(data)
        os.replace(tmp, cache)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def code_of(path):
    """The code object of the kernel file at ``path``: cached, or compiled and then cached."""
    st = os.stat(path)
    header = MAGIC + b"%d:%d\n" % (st.st_mtime_ns, st.st_size)
    cache = _cache_path(path)
    try:
        with open(cache, "rb") as f:
            own = os.fstat(f.fileno())
            data = f.read()
        # Only an entry this user wrote and no one else can change is loaded.
        if data.startswith(header) and own.st_uid == os.getuid() and not own.st_mode & 0o022:
            return marshal.loads(data[len(header):])  # noqa: S302 (our own private cache)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    with open(path, encoding="utf-8") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    _store(cache, header + marshal.dumps(code))
    return code


def main():
    # The runner finds code_of here; the user's namespace replaces ``__main__`` later.
    sys.modules["_execkit_start"] = sys.modules[__name__]
    runner = type(sys)("_execkit_runner")
    path = os.path.join(HERE, "runner.py")
    runner.__file__ = path
    sys.modules["_execkit_runner"] = runner
    exec(code_of(path), runner.__dict__)
    runner.main()


if __name__ == "__main__":
    main()
