"""Syntax-aware magic rewriting and the magic commands (spec-eval.md P14, P15).

The scanner tracks string literals (every prefix, single and triple quotes, escapes), bracket
depth, backslash continuations and comments, so only a physical line that starts a logical line
can be a magic. No valid Python statement starts with ``%`` or ``!``, so a rewrite never
changes valid code, and every rewritten line stays on its own line (traceback line numbers
match the cell as written).
"""

import os
import re
import sys
import time

LINE_MAGICS = ("cd", "env", "load", "ls", "pip", "pwd", "reset", "run", "time", "timeit", "who",
               "whos")
CELL_MAGICS = ("bash", "capture", "sh", "time", "timeit", "writefile")
AVAILABLE = " ".join(["%" + m for m in LINE_MAGICS] + ["%%" + m for m in CELL_MAGICS])
CAPTURE_MAX = 16 * 1024 * 1024
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ASSIGN = re.compile(r"^(\s*)(" + IDENT + r"(?:\s*[.,]\s*" + IDENT + r")*)\s*=\s*([%!])(.*)$")


class UsageError(Exception):
    """A malformed or unknown magic."""


class PipError(Exception):
    """pip exited with a non-zero code."""


class ShellOutput(list):
    """Captured lines of ``x = !cmd``: a list with .n, .s and .returncode."""

    returncode = 0

    @property
    def n(self):
        return "\n".join(self)

    @property
    def s(self):
        return " ".join(self)


class CapturedOutput:
    """What %%capture collected."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.stdout = ""
        self.stderr = ""
        self.outputs = []

    def add_stream(self, name, text):
        if name == "stdout":
            self.stdout += text
        else:
            self.stderr += text

    def show(self):
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)
        for data in self.outputs:
            self._kernel.display_bundle(data)

    def __repr__(self):
        return "<CapturedOutput: %d bytes stdout, %d bytes stderr, %d displays>" % (
            len(self.stdout), len(self.stderr), len(self.outputs))


def scan_line(line, st):
    """Advances scanner state ``st`` = [quote or None, depth, continued] over one line."""
    quote, depth = st[0], st[1]
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if c == "#":
            n = i
            break
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c in "\"'":
            quote = c * 3 if line.startswith(c * 3, i) else c
            i += len(quote)
            continue
        i += 1
    body = line[:n].rstrip("\r\n")
    escaped_newline = body.endswith("\\") and (len(body) - len(body.rstrip("\\"))) % 2 == 1
    if quote is not None and len(quote) == 1 and not escaped_newline:
        quote = None  # an unterminated one-line string: a SyntaxError that Python reports
    st[0], st[1] = quote, depth
    st[2] = quote is None and escaped_newline


def rewrite_line(line):
    """The call a magic line becomes, or None when the line is not a magic."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    text = stripped.rstrip("\r\n")
    if text.startswith("%") and not text.startswith("%%"):
        name, _, args = text[1:].partition(" ")
        if re.match(IDENT + "$", name):
            return "%s_ek_magic_(%r, %r)" % (indent, name, args.strip())
    if text.startswith("!") and not text.startswith("!="):
        return "%s_ek_shell_(%r)" % (indent, text[1:])
    match = ASSIGN.match(text)
    if match:
        target, kind, rest = match.group(2), match.group(3), match.group(4)
        if kind == "!" and not rest.startswith("="):
            return "%s%s = _ek_shell_(%r, capture=True)" % (indent, target, rest)
        if kind == "%":
            name, _, args = rest.partition(" ")
            if re.match(IDENT + "$", name):
                return "%s%s = _ek_magic_(%r, %r)" % (indent, target, name, args.strip())
    return None


def transform(source):
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        head = lines[first].strip()[2:]
        name, _, args = head.partition(" ")
        body = "\n".join(lines[first + 1:])
        call = "_ek_cell_magic_(%r, %r, %r)" % (name, args.strip(), body)
        return "\n" * first + call + "\n" * (len(lines) - first - 1)
    st = [None, 0, False]
    out = []
    for line in lines:
        starts_logical = st[0] is None and st[1] == 0 and not st[2]
        if starts_logical and line.lstrip().startswith("%%"):
            name = line.strip()[2:].split(" ")[0]
            raise UsageError("%%%%%s must be the first line of the cell" % name)
        new = rewrite_line(line) if starts_logical else None
        if new is not None:
            out.append(new)
            st[2] = False
            continue
        out.append(line)
        scan_line(line, st)
    return "\n".join(out)


def fmt_time(seconds):
    if seconds < 1e-3:
        return "%.3g µs" % (seconds * 1e6)
    if seconds < 1:
        return "%.3g ms" % (seconds * 1e3)
    return "%.3g s" % seconds


class Magics:
    """The magic commands, bound to one kernel."""

    def __init__(self, kernel, state):
        self.k = kernel
        self.state = state
        self.prev_dir = None
        self.transform = transform

    # -- dispatch ---------------------------------------------------------------------
    def line_magic(self, name, args):
        fn = getattr(self, "m_" + name, None)
        if name not in LINE_MAGICS or fn is None:
            raise UsageError("unknown magic %%%s; available: %s" % (name, AVAILABLE))
        return fn(args)

    def cell_magic(self, name, args, body):
        fn = getattr(self, "c_" + name, None)
        if name not in CELL_MAGICS or fn is None:
            raise UsageError("unknown magic %%%%%s; available: %s" % (name, AVAILABLE))
        return fn(args, body)

    def shell(self, cmd, capture=False):
        import subprocess

        if not capture:
            self.k.sync()
            proc = subprocess.run(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                sys.stderr.write("[exit code %d]\n" % proc.returncode)
            return None
        proc = subprocess.run(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE)
        data = proc.stdout
        note = len(data) > CAPTURE_MAX
        out = ShellOutput(data[:CAPTURE_MAX].decode("utf-8", "replace").splitlines())
        if note:
            out.append("[captured output truncated at 16 MiB]")
        out.returncode = proc.returncode
        return out

    # -- line magics ------------------------------------------------------------------
    def m_cd(self, args):
        target = args.strip()
        if target == "-":
            target = self.prev_dir or os.getcwd()
        elif not target:
            target = os.path.expanduser("~")
        here = os.getcwd()
        os.chdir(os.path.expanduser(target))
        self.prev_dir = here
        print(os.getcwd())

    def m_pwd(self, _args):
        return os.getcwd()

    def m_ls(self, args):
        path = os.path.expanduser(args.strip() or ".")
        names = sorted(os.listdir(path))
        for name in names[:1000]:
            print(name + ("/" if os.path.isdir(os.path.join(path, name)) else ""))
        if len(names) > 1000:
            print("[… %d more]" % (len(names) - 1000))

    def m_env(self, args):
        args = args.strip()
        if not args:
            self.k.display_bundle({"application/json": dict(sorted(os.environ.items())),
                                   "text/plain": repr(dict(os.environ))})
            return None
        if "=" in args:
            name, _, value = args.partition("=")
            os.environ[name.strip()] = value.strip()
            return None
        return os.environ.get(args)

    def _compile(self, src, mode="exec"):
        return compile(src, "<magic>", mode, dont_inherit=True)

    def _run_timed(self, src):
        try:
            code, is_expr = self._compile(src, "eval"), True
        except SyntaxError:
            code, is_expr = self._compile(src), False
        start = time.perf_counter()
        value = self.k.run_code(code)
        return time.perf_counter() - start, (value if is_expr else None)

    def m_time(self, args):
        elapsed, value = self._run_timed(args)
        print("Wall time: %s" % fmt_time(elapsed))
        return value

    def m_timeit(self, args):
        number = repeat = None
        while True:
            match = re.match(r"\s*-([nr])\s*(\d+)\s*", args)
            if not match:
                break
            if match.group(1) == "n":
                number = int(match.group(2))
            else:
                repeat = int(match.group(2))
            args = args[match.end():]
        return self._timeit(args, number, repeat or 7)

    def _timeit(self, src, number, repeat):
        code = self._compile(src)
        if number is None:
            number = 1
            while True:
                start = time.perf_counter()
                for _ in range(number):
                    self.k.run_code(code)
                if time.perf_counter() - start >= 0.2 or number >= 10 ** 9:
                    break
                number *= 10
        times, budget = [], time.perf_counter() + 10.0
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                self.k.run_code(code)
            times.append((time.perf_counter() - start) / number)
            if time.perf_counter() > budget:
                break
        mean = sum(times) / len(times)
        std = (sum((t - mean) ** 2 for t in times) / len(times)) ** 0.5
        print("%s ± %s per loop (mean ± std. dev. of %d runs, %d loops each)" % (
            fmt_time(mean), fmt_time(std), len(times), number))

    def m_who(self, _args):
        names = self.k.user_names()
        print("  ".join(names) if names else "Interactive namespace is empty.")

    def m_whos(self, _args):
        names = self.k.user_names()
        if not names:
            print("Interactive namespace is empty.")
            return
        print("%-20s %-15s %s" % ("Variable", "Type", "Data/Info"))
        print("-" * 60)
        for name in names:
            value = self.k.ns[name]
            text = repr(value).replace("\n", " ")
            print("%-20s %-15s %s" % (name, type(value).__name__, text[:60]))

    def m_reset(self, _args):
        self.k.reset_namespace()

    def m_load(self, args):
        path = os.path.expanduser(args.strip())
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        lines = source.splitlines()
        shown = "\n".join(lines[:200]) + ("\n…" if len(lines) > 200 else "")
        self.k.display_bundle({"text/markdown": "```python\n%s\n```" % shown,
                               "text/plain": shown})
        self.k.run_code(compile(source, path, "exec", dont_inherit=True))

    def m_run(self, args):
        import shlex

        argv = shlex.split(args)
        in_ns = bool(argv) and argv[0] == "-i"
        if in_ns:
            argv = argv[1:]
        if not argv:
            raise UsageError("%run needs a file path")
        path = os.path.expanduser(argv[0])
        with open(path, encoding="utf-8") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        saved = sys.argv
        sys.argv = argv
        try:
            if in_ns:
                exec(code, self.k.ns)
                return
            scope = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
            exec(code, scope)
            for key, value in scope.items():
                if not (key.startswith("__") and key.endswith("__")):
                    self.k.ns[key] = value
        finally:
            sys.argv = saved

    def m_pip(self, args):
        import shlex
        import subprocess

        import importlib

        argv = shlex.split(args)
        self.k.sync()
        code = subprocess.run([sys.executable, "-m", "pip"] + argv,
                              stdin=subprocess.DEVNULL).returncode
        if code != 0:
            raise PipError("pip exited with code %d" % code)
        importlib.invalidate_caches()
        if argv and argv[0] == "install":
            for arg in argv[1:]:
                if arg.startswith("-"):
                    continue
                if arg.endswith(".whl"):
                    # A wheel file: <name>-<version>-<tags>.whl names its distribution first.
                    arg = arg.replace("\\", "/").rsplit("/", 1)[-1].split("-")[0]
                pkg = re.split(r"[<>=!~\[ ;]", arg)[0].replace("-", "_").lower()
                if pkg in sys.modules:
                    print("[%s was already imported; run a cell with \"reset\": true to load "
                          "the new version]" % pkg)

    # -- cell magics ------------------------------------------------------------------
    def _shell_body(self, shell, args, body):
        import shutil
        import subprocess

        exe = shutil.which(shell)
        if exe is None:
            raise UsageError("%s not found on PATH" % shell)
        self.k.sync()
        proc = subprocess.run([exe, "-c", body], stdin=subprocess.DEVNULL)
        if proc.returncode != 0 and "--no-raise-error" not in args.split():
            raise subprocess.CalledProcessError(proc.returncode, shell)

    def c_bash(self, args, body):
        self._shell_body("bash", args, body)

    def c_sh(self, args, body):
        self._shell_body("sh", args, body)

    def c_capture(self, args, body):
        captured = CapturedOutput(self.k)
        self.k.sync()
        self.state.capture_stack.append(captured)
        try:
            self.k.run_source(body, "<cell-%d>" % self.state.count, display_last=False)
        finally:
            self.k.sync()
            self.state.capture_stack.pop()
        name = args.strip()
        if name:
            self.k.ns[name] = captured

    def c_writefile(self, args, body):
        import shlex

        argv = shlex.split(args)
        append = bool(argv) and argv[0] == "-a"
        if append:
            argv = argv[1:]
        if not argv:
            raise UsageError("%%writefile needs a file path")
        path = os.path.expanduser(argv[0])
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        data = body.encode("utf-8")
        with open(path, "ab" if append else "wb") as f:
            f.write(data)
        print("Wrote %d bytes to %s" % (len(data), path))

    def c_time(self, _args, body):
        start = time.perf_counter()
        try:
            _has, value = self.k.run_source(body, "<cell-%d>" % self.state.count)
        finally:
            print("Wall time: %s" % fmt_time(time.perf_counter() - start))
        return value

    def c_timeit(self, args, body):
        import shlex

        argv = shlex.split(args)
        opts = dict(zip(argv[::2], argv[1::2]))
        number = int(opts["-n"]) if "-n" in opts else None
        return self._timeit(body, number, int(opts.get("-r", 7)))
