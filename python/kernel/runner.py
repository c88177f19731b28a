"""execkit Python kernel: runs cells in one persistent namespace, speaking NDJSON.

The host starts this file through ``start.py`` (``python -I -B -X utf8 start.py``, which loads
the kernel's files from a bytecode cache) with fd 3 carrying commands
(host -> kernel) and fd 4 carrying events (kernel -> host); fds 1 and 2 are a diagnostic pipe.
Before anything else the protocol fds move to numbers >= 100 with close-on-exec, so user code,
C extensions and child processes can neither read nor forge frames. Cell output is captured
through private pipes that replace fds 1 and 2 and is forwarded as ``stream`` frames.

Standard library only, Python 3.8+ (spec-eval.md P5, P20). ``magics.py`` and ``prelude.py``
live next to this file and are loaded by path, because ``-I`` keeps this directory off sys.path.
"""

# Not ``signal``: it imports ``enum``, a cost on every start that few cells need (signals.py).
import _signal as signal
import os
import sys
import threading
import time

PROTOCOL = 1
HERE = os.path.dirname(os.path.abspath(__file__))
# Output written while no cell runs is kept (the newest part only) for the next cell.
BETWEEN_CELLS_MAX = 65536
CO_COROUTINE = 0x0080
# Where an awaiting last expression leaves its value for the runner (removed at once).
LAST_VALUE = "_ek_last_value_"


def compile_file(path):
    """The code of a kernel file: from ``start.py``'s bytecode cache when the kernel started
    through it, else compiled here."""
    start = sys.modules.get("_execkit_start")
    if start is not None:
        return start.code_of(path)
    with open(path, encoding="utf-8") as f:
        return compile(f.read(), path, "exec", dont_inherit=True)


def load_module(name):
    """Loads a kernel file next to this one as module ``_execkit_<name>`` (no importlib)."""
    import types

    full = "_execkit_" + name
    module = sys.modules.get(full)
    if module is not None:
        return module
    path = os.path.join(HERE, name + ".py")
    module = types.ModuleType(full)
    module.__file__ = path
    code = compile_file(path)
    sys.modules[full] = module
    exec(code, module.__dict__)
    return module


channel = load_module("channel")
codec = load_module("codec")
# Frames: compact, UTF-8 as is, and strict JSON (the host's parser refuses NaN).
dumps_frame = codec.encoder(False, (",", ":"), False)
HIGH = channel.HighFds()
CMD = channel.Guarded(HIGH, 3)
EVT = channel.Guarded(HIGH, 4)
# The original fd 2 (the diagnostic pipe), kept for faulthandler so fatal-signal tracebacks
# reach the host's diagnostic ring even after the user closes fd 2.
DIAG_FD = HIGH.place(os.dup(2))


def _close_protocol_fds_in_child():
    for fd in CMD.numbers() + EVT.numbers():
        try:
            os.close(fd)
        except OSError:
            pass


os.register_at_fork(after_in_child=_close_protocol_fds_in_child)

MAIN_THREAD = threading.get_ident()
# Reentrant: a user's signal handler runs on the main thread, possibly while that thread is in
# the middle of writing a frame; the handler's own frames then queue behind the one being written.
_evt_lock = threading.RLock()
_writer = {"busy": False, "again": False}
# Frames whose delivery may wait for the next frame (started, result, error): one write per
# cell instead of three halves a trivial cell's round trip. Order is kept: every write
# flushes what is pending first.
_pending = []


def json_safe(value, depth=0):
    """A copy of a frame value that strict JSON accepts: NaN and infinities become None,
    keys become strings and any other object its repr."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if depth > 100:
        return repr(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): json_safe(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, depth + 1) for v in value]
    return repr(value)


def emit(frame, defer=False):
    """Writes one frame. Lone surrogates never reach the wire (replaced on encoding)."""
    try:
        line = dumps_frame(frame)
    except (TypeError, ValueError):
        # Non-finite floats become null in the value itself; the text is never patched, so a
        # string such as "NaN values" or "-inf" reaches the host unchanged.
        line = dumps_frame(json_safe(frame))
    data = line.encode("utf-8", "replace") + b"\n"
    # A SIGINT that lands while the main thread writes a frame waits until the frame is whole
    # (a half-written line would corrupt the next frame); see _sigint.
    main = threading.get_ident() == MAIN_THREAD
    if main:
        state.in_emit += 1
    try:
        _write_frame(data, defer)
    finally:
        if main:
            state.in_emit -= 1
            if not state.in_emit and state.interrupt_deferred:
                state.interrupt_deferred = False
                if state.running:
                    raise KeyboardInterrupt


def _write_frame(data, defer):
    with _evt_lock:
        if defer or _writer["busy"]:
            _pending.append(data)
            _writer["again"] = _writer["again"] or not defer
            return
        _writer["busy"] = True
        try:
            raised = _write_pending(data)
        finally:
            _writer["busy"] = False
    if raised is not None:
        _handler_raised(raised)


def _write_pending(data):
    """Writes the pending frames and ``data``, then whatever a signal handler queued meanwhile.
    An exception a handler raised inside a write is held until every frame is whole (half a
    frame would corrupt the channel) and returned."""
    raised = None
    while True:
        if _pending:
            data = b"".join(_pending) + data
            del _pending[:]
        raised = _write_all(data) or raised
        if not _writer["again"]:
            return raised
        _writer["again"] = False
        data = b""


def _write_all(data):
    raised = None
    view = memoryview(data)
    while view:
        try:
            n = os.write(EVT.fd, view)
        except InterruptedError:
            continue
        except OSError:
            if EVT.repair():
                continue  # user code closed our number; the backup put it back
            os._exit(0)  # the host is gone
        except BaseException as exc:  # noqa: BLE001 - a signal handler's; see _write_pending
            raised = raised or exc
            continue
        view = view[n:]
    return raised


def _handler_raised(exc):
    """An exception a user's signal handler raised inside a frame write: raised on into the
    cell once the frame is whole, as plain Python would."""
    if state.running:
        raise exc
    between_cells("[a signal handler raised %s outside a cell: %s]\n" % (type(exc).__name__, exc))


class State:
    """What the kernel knows about the running cell."""

    def __init__(self):
        self.cell_id = None
        self.running = False
        self.deadline = 0.0
        self.count = 0
        self.tools = []
        self.between = []
        self.between_len = 0
        self.capture_stack = []
        self.in_emit = 0
        self.interrupt_deferred = False


state = State()


def forward(name, text):
    if state.capture_stack:
        state.capture_stack[-1].add_stream(name, text)
        return
    cid = state.cell_id
    if cid is None:
        between_cells(text)
        return
    emit({"type": "stream", "id": cid, "name": name, "text": text})


def between_cells(text):
    """Keeps output written while no cell runs (the newest part) for the next cell."""
    state.between.append(text)
    state.between_len += len(text)
    while state.between_len > BETWEEN_CELLS_MAX and len(state.between) > 1:
        state.between_len -= len(state.between.pop(0))


class StdinNotAvailable(EOFError):
    """Raised by input() and sys.stdin reads: eval cells have no stdin."""


NO_STDIN = (
    "input() is not available in eval cells (there is no stdin); put the data in the code "
    "or read it from a file"
)


class NoStdin:
    encoding = "utf-8"

    def _fail(self, *_args, **_kwargs):
        raise StdinNotAvailable(NO_STDIN)

    read = readline = readlines = _fail
    buffer = property(lambda self: self)

    def isatty(self):
        return False

    def fileno(self):
        return 0

    def __iter__(self):
        self._fail()


def _input(prompt=""):
    raise StdinNotAvailable(NO_STDIN)


def _sigint(_signum, _frame):
    # Idle or between cells: a late interrupt is discarded (P16).
    if state.running:
        if state.in_emit:
            state.interrupt_deferred = True
            return
        raise KeyboardInterrupt


class Kernel:
    """What prelude.py and magics.py may use from the runner."""

    def __init__(self):
        self.streams = load_module("streams")
        self.ns = None
        self.merger = self.streams.Merger(forward)
        self.out = self.streams.Capture("stdout", 1, self.merger, HIGH)
        self.err = self.streams.Capture("stderr", 2, self.merger, HIGH)
        self.loop = None
        self.stdout = None
        self.stderr = None
        self.magics = None
        self.prelude_names = set()
        self.tool_replies = {}
        self.tool_seq = 0
        self.tool_lock = threading.Lock()
        self.figures_this_cell = 0

    # -- output -----------------------------------------------------------------------
    def proxies(self):
        """Restores fds 1 and 2 and reinstalls the stdio proxies when user code replaced them."""
        # User code may have closed any descriptor (os.closerange(3, 1024) is a daemon idiom).
        CMD.repair()
        EVT.repair()
        for capture in (self.out, self.err):
            capture.repair()
            capture.restore_fd()
        if self.stdout is None or sys.stdout is not self.stdout or self.stdout.closed:
            self.stdout = self.streams.TextProxy(self.out, "replace")
        if self.stderr is None or sys.stderr is not self.stderr or self.stderr.closed:
            self.stderr = self.streams.TextProxy(self.err, "backslashreplace")
        sys.stdout, sys.stderr = self.stdout, self.stderr
        if not isinstance(sys.stdin, NoStdin):
            sys.stdin = NoStdin()

    def sync(self):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        self.out.sync()
        self.err.sync()
        self.merger.flush()

    def send(self, frame, defer=False):
        if state.capture_stack and frame["type"] == "display":
            state.capture_stack[-1].outputs.append(frame["data"])
            return
        self.sync()
        emit(frame, defer)

    def display_value(self, obj):
        """display(obj): its bundle, plus the JSON copy of a built-in value for programs."""
        self.display_bundle(*self.bundle_mod.describe(obj))

    def display_bundle(self, data, metadata=None):
        if state.cell_id is None and not state.capture_stack:
            return
        frame = {"type": "display", "id": state.cell_id, "data": data}
        if metadata:
            frame["metadata"] = metadata
        self.send(frame)

    # -- tool calls -------------------------------------------------------------------
    def call_tool(self, name, args):
        """Returns ("result", ToolResult dict) or ("error", one line)."""
        cid = state.cell_id
        if cid is None:
            return "error", "tool calls are only possible while a cell is running"
        with self.tool_lock:
            self.tool_seq += 1
            call_id = self.tool_seq
            slot = [threading.Event(), None]
            self.tool_replies[call_id] = slot
        emit({"type": "tool_call", "id": cid, "call_id": call_id, "name": name, "args": args})
        wait = max(0.0, state.deadline - time.monotonic()) + 5.0
        try:
            if not slot[0].wait(wait):
                return "error", "tool call %s got no reply" % name
        except KeyboardInterrupt:
            emit({"type": "tool_cancel", "call_id": call_id})
            raise
        finally:
            with self.tool_lock:
                self.tool_replies.pop(call_id, None)
        reply = slot[1] or {}
        if reply.get("error") is not None:
            return "error", str(reply.get("error"))
        return "result", reply.get("result") or {}

    def deliver_tool_result(self, cmd):
        with self.tool_lock:
            slot = self.tool_replies.get(cmd.get("call_id"))
        if slot is not None:
            slot[1] = cmd
            slot[0].set()

    # -- namespace --------------------------------------------------------------------
    def fresh_namespace(self):
        import types

        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main
        self.ns = main.__dict__
        self.install_prelude()

    def reset_namespace(self):
        """%reset: clears the namespace in place (the running cell sees it) and reinstalls the
        prelude."""
        self.ns.clear()
        self.ns.update({"__name__": "__main__", "__builtins__": __builtins__})
        self.install_prelude()

    def install_prelude(self):
        before = set(self.ns)
        self.ns["_ek_magic_"] = lambda *a: self.get_magics().line_magic(*a)
        self.ns["_ek_shell_"] = lambda *a, **k: self.get_magics().shell(*a, **k)
        self.ns["_ek_cell_magic_"] = lambda *a: self.get_magics().cell_magic(*a)
        scope = {"__name__": "execkit_prelude", "_kernel": self}
        exec(compile_file(os.path.join(HERE, "prelude.py")), scope)
        for name in scope.get("__all__", []):
            self.ns[name] = scope[name]
        self.prelude_names = (set(self.ns) - before) | {"_ek_magic_", "_ek_shell_",
                                                        "_ek_cell_magic_"}

    def get_magics(self):
        """The magic commands, loaded on first use (most cells never need them)."""
        if self.magics is None:
            self.magics = load_module("magics").Magics(self, state)
        return self.magics

    def tool_names(self):
        return list(state.tools)

    def user_names_all(self):
        """Every user-bound name (modules included), for snapshots."""
        return [n for n in self.ns if not n.startswith("_") and n not in self.prelude_names]

    def user_names(self):
        import types

        out = []
        for name, value in self.ns.items():
            if name.startswith("_") or name in self.prelude_names:
                continue
            if isinstance(value, types.ModuleType):
                continue
            out.append(name)
        return sorted(out)

    # -- execution --------------------------------------------------------------------
    def event_loop(self):
        if self.loop is None or self.loop.is_closed():
            import asyncio

            self.loop = asyncio.new_event_loop()
        return self.loop

    def run_code(self, code):
        value = eval(code, self.ns)  # noqa: S307 - running the user's cell is the job
        if code.co_flags & CO_COROUTINE:
            value = self.event_loop().run_until_complete(value)
        return value

    def run_source(self, source, filename, display_last=True):
        """Compiles and runs one cell body; returns (has_value, value)."""
        remember_source(filename, source)
        if "%" in source or "!" in source:
            source = self.get_magics().transform(source)
        expr = single_expression(source, filename) if display_last else None
        if expr is not None:
            return True, self.run_code(expr)
        import ast

        flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST | flags, dont_inherit=True)
        last = None
        if display_last and tree.body and isinstance(tree.body[-1], ast.Expr):
            if not ends_with_semicolon(source):
                last = tree.body.pop()
        body = compile(tree, filename, "exec", flags, dont_inherit=True)
        if last is None:
            self.run_code(body)
            return False, None
        expr = compile(ast.Expression(last.value), filename, "eval", flags, dont_inherit=True)
        if expr.co_flags & CO_COROUTINE and not body.co_flags & CO_COROUTINE:
            # Only the last expression awaits: the whole cell must run on the loop, or tasks
            # the body creates would see no running loop.
            target = ast.Name(id=LAST_VALUE, ctx=ast.Store())
            tree.body.append(ast.copy_location(ast.Assign(targets=[target], value=last.value),
                                               last))
            ast.fix_missing_locations(tree)
            self.run_code(compile(tree, filename, "exec", flags, dont_inherit=True))
            return True, self.ns.pop(LAST_VALUE, None)
        self.run_code(body)
        return True, self.run_code(expr)

    def flush_figures(self):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None or "matplotlib" not in sys.modules:
            return
        extra = 0
        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            if getattr(fig, "_execkit_shown", False):
                pass
            elif self.figures_this_cell < 10:
                self.figures_this_cell += 1
                self.display_bundle(self.bundle_mod.bundle(fig))
            else:
                extra += 1
            plt.close(fig)
        if extra:
            sys.stdout.write("[%d more figures closed without display]\n" % extra)

    def patch_pyplot(self, module):
        """plt.show() displays and closes the open figures at once (P11)."""

        def show(*_args, **_kwargs):
            self.flush_figures()

        module.show = show


# Cell sources for tracebacks and ``inspect``, kept here until ``linecache`` is imported (it
# imports ``tokenize`` and ``re``: milliseconds a first cell seldom needs); ImportHook then
# hands them over.
_cell_sources = {}


def remember_source(filename, source):
    entry = (len(source), None, source.splitlines(True), filename)
    linecache = sys.modules.get("linecache")
    if linecache is None:
        _cell_sources[filename] = entry
    else:
        linecache.cache[filename] = entry


def hand_over_sources(linecache):
    linecache.cache.update(_cell_sources)
    _cell_sources.clear()


# ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`` (Python 3.8+), without importing ``ast`` for it.
TOP_LEVEL_AWAIT = 0x2000


def single_expression(source, filename):
    """The code of a cell that is one expression, compiled without ``ast`` (whose import, with
    ``enum`` and ``contextlib``, is most of a first cell such as ``1+1``); else None, and the
    cell takes the general path, which also reports any syntax error."""
    try:
        code = compile(source, filename, "eval", TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if code.co_flags & CO_COROUTINE:
        return None  # the general path runs an awaiting cell on the loop
    return code


def ends_with_semicolon(source):
    if ";" not in source:
        return False
    import io
    import tokenize

    last = None
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER,
            tokenize.INDENT, tokenize.DEDENT)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in skip:
                last = tok
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.string == ";"


def error_frame(cid, exc, limit=None):
    """The ``error`` frame of exc; the traceback code loads on the first error only."""
    return load_module("tracebacks").error_frame(cid, exc, HERE, limit)


def send_result(kernel, cid, value):
    data, meta = kernel.bundle_mod.describe(value)
    frame = {"type": "result", "id": cid, "data": data}
    if meta:
        frame["metadata"] = meta
    kernel.send(frame, defer=True)


def execute(kernel, cmd):
    cid = cmd.get("id")
    code = cmd.get("code")
    if not isinstance(code, str):
        code = ""
    state.count += 1
    count = state.count
    state.tools = [t for t in cmd.get("tools") or [] if isinstance(t, str)]
    timeout_ms = cmd.get("timeout_ms")
    timeout_s = timeout_ms / 1000.0 if isinstance(timeout_ms, (int, float)) else 30.0
    kernel.proxies()
    kernel.sync()
    kernel.figures_this_cell = 0
    state.cell_id = cid
    state.interrupt_deferred = False
    state.deadline = time.monotonic() + timeout_s
    emit({"type": "started", "id": cid, "execution_count": count}, defer=True)
    if state.between:
        text = "".join(state.between)
        state.between, state.between_len = [], 0
        emit({"type": "stream", "id": cid, "name": "stdout",
              "text": "[output produced between cells]\n" + text})
    status = "ok"
    try:
        # The display step (the value's __repr__ and friends) is user code too: SIGINT
        # interrupts it like the cell body, and the namespace is kept.
        state.running = True
        try:
            kernel.signals.deliver()
            has_value, value = kernel.run_source(code, "<cell-%d>" % count)
            if has_value and value is not None:
                kernel.ns["_"] = value
                send_result(kernel, cid, value)
        finally:
            state.running = False
    except KeyboardInterrupt as exc:
        status = "interrupted"
        kernel.send(error_frame(cid, exc, limit=-10), defer=True)
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            sys.stdout.write("[sys.exit(0) ended the cell; the kernel keeps running]\n")
        else:
            status = "error"
            kernel.send(error_frame(cid, exc), defer=True)
    except BaseException as exc:  # noqa: BLE001 - every user error becomes an error frame
        status = "error"
        kernel.send(error_frame(cid, exc), defer=True)
    try:
        kernel.flush_figures()
    except Exception as exc:  # noqa: BLE001
        sys.stderr.write("[figure capture failed: %s]\n" % exc)
    kernel.sync()
    emit({"type": "done", "id": cid, "status": status, "execution_count": count})
    state.cell_id = None


def command_reader(kernel, queue):
    buf = bytearray()
    while True:
        try:
            chunk = os.read(CMD.fd, 65536)
        except InterruptedError:
            continue
        except OSError:
            if CMD.repair():
                continue  # user code closed our number; the backup put it back
            os._exit(0)
        if not chunk:
            os._exit(0)  # command pipe EOF: the host is gone or closed us
        buf += chunk
        while True:
            end = buf.find(b"\n")
            if end < 0:
                break
            line = bytes(buf[:end])
            del buf[:end + 1]
            handle_command(kernel, queue, line)


def handle_command(kernel, queue, line):
    try:
        cmd = codec.loads(line)
    except ValueError:
        return
    if not isinstance(cmd, dict):
        return
    kind = cmd.get("type")
    if kind == "shutdown":
        os._exit(0)
    elif kind == "tool_result":
        kernel.deliver_tool_result(cmd)
    elif kind in ("execute", "snapshot", "restore"):
        queue.put(cmd)


NO_LOOP = (
    "no event loop is running in a synchronous cell: the kernel's asyncio loop is stopped "
    "between cells (so asyncio.run() works here), and a task scheduled now would never run; "
    "await the work in the cell instead, e.g. `await asyncio.gather(...)`"
)


def patch_asyncio(kernel, module):
    """asyncio.get_event_loop() (and ensure_future/create_task through it) in a synchronous
    cell fails with a message that says why and what to do (P7), instead of "There is no
    current event loop" or a fresh loop whose tasks never run."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy = module.get_event_loop_policy()
    original = policy.get_event_loop

    def get_event_loop():
        if state.running:
            raise RuntimeError(NO_LOOP)
        return original()

    policy.get_event_loop = get_event_loop


class ImportHook:
    """Patches a few modules right after their first import; nothing is imported here:
    matplotlib.pyplot (plt.show displays, P11), asyncio (the sync-cell loop message), signal
    (users' handlers run inside cells only, signals.py) and linecache (the cells' sources)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.patches = {"matplotlib.pyplot": kernel.patch_pyplot,
                        "asyncio": lambda module: patch_asyncio(kernel, module),
                        "signal": kernel.signals.install,
                        "linecache": hand_over_sources}

    def find_spec(self, name, path=None, target=None):
        patch = self.patches.get(name)
        if patch is None:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


def build_sys_path():
    """P3: the session cwd, then PYTHONPATH, then user site-packages outside a venv."""
    front = [os.getcwd()]
    front += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:0] = [p for p in front if p not in sys.path]
    if sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        import site

        user = site.getusersitepackages()
        if isinstance(user, str) and os.path.isdir(user) and user not in sys.path:
            site.addsitedir(user)


def main():
    import builtins
    import faulthandler
    import queue as queue_mod

    faulthandler.enable(file=DIAG_FD)
    signal.signal(signal.SIGINT, _sigint)
    builtins.input = _input
    kernel = Kernel()
    kernel.signals = load_module("signals").Gate(lambda: state.running)
    kernel.proxies()
    kernel.bundle_mod = load_module("bundle")
    kernel.bundle = kernel.bundle_mod.bundle
    kernel.fresh_namespace()
    build_sys_path()
    if "signal" in sys.modules:
        kernel.signals.install(sys.modules["signal"])
    if "linecache" in sys.modules:
        hand_over_sources(sys.modules["linecache"])
    sys.meta_path.insert(0, ImportHook(kernel))
    commands = queue_mod.Queue(maxsize=64)
    threading.Thread(target=command_reader, args=(kernel, commands), name="execkit-commands",
                     daemon=True).start()
    emit({"type": "ready", "protocol": PROTOCOL, "language": "python",
          "version": "%d.%d.%d" % sys.version_info[:3], "pid": os.getpid(),
          "executable": sys.executable})
    while True:
        cmd = commands.get()
        kind = cmd.get("type")
        if kind == "execute":
            execute(kernel, cmd)
        elif kind == "snapshot":
            emit(load_module("snapshot").save(kernel, cmd))
        elif kind == "restore":
            emit(load_module("snapshot").restore(kernel, cmd))


if __name__ == "__main__":
    main()
