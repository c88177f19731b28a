"""Drives the kernel (start.py, then runner.py) over its real pipes (fd 3 commands, fd 4 events),
as the host does."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.dirname(HERE)
PRELUDE = os.path.join(os.path.dirname(os.path.dirname(KERNEL_DIR)), "prelude", "prelude.py")


class Kernel:
    def __init__(self, cwd=None):
        self.dir = tempfile.mkdtemp(prefix="execkit-kernel-test-")
        for name in ("start.py", "runner.py", "magics.py", "bundle.py", "snapshot.py", "streams.py",
                     "channel.py", "codec.py", "tracebacks.py", "signals.py"):
            shutil.copy(os.path.join(KERNEL_DIR, name), self.dir)
        shutil.copy(PRELUDE, self.dir)
        cmd_r, self.cmd_w = os.pipe()
        self.evt_r, evt_w = os.pipe()
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")

        def setup():
            os.setsid()
            a, b = os.dup(cmd_r), os.dup(evt_w)  # may equal 3/4: move away first
            a2, b2 = os.dup(a), os.dup(b)
            os.dup2(a2, 3)
            os.dup2(b2, 4)

        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-X", "utf8", os.path.join(self.dir, "start.py")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            close_fds=False, preexec_fn=setup, cwd=cwd or self.dir, env=env)
        os.close(cmd_r)
        os.close(evt_w)
        self.events = os.fdopen(self.evt_r, "rb")
        self.seq = 0
        self.ready = self.next_frame()

    def send(self, frame):
        os.write(self.cmd_w, (json.dumps(frame) + "\n").encode())

    def next_frame(self):
        line = self.events.readline()
        if not line:
            return None
        return json.loads(line)

    def run(self, code, timeout_ms=30000, tools=None, on_frame=None):
        self.seq += 1
        cid = self.seq
        self.send({"type": "execute", "id": cid, "code": code, "timeout_ms": timeout_ms,
                   "cell": {"index": 1, "title": None}, "tools": tools or []})
        frames = []
        while True:
            frame = self.next_frame()
            if frame is None:
                return frames
            frames.append(frame)
            if on_frame is not None:
                on_frame(self, frame)
            if frame.get("type") == "done" and frame.get("id") == cid:
                return frames

    def close(self):
        try:
            os.close(self.cmd_w)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.proc.stdout.close()
        self.events.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class KernelTestCase(unittest.TestCase):
    """A test class sharing one kernel, started before its first test and closed after."""

    @classmethod
    def setUpClass(cls):
        cls.k = Kernel()

    @classmethod
    def tearDownClass(cls):
        cls.k.close()


def stdout(frames):
    return "".join(f["text"] for f in frames if f["type"] == "stream" and f["name"] == "stdout")


def stderr(frames):
    return "".join(f["text"] for f in frames if f["type"] == "stream" and f["name"] == "stderr")


def of_type(frames, kind):
    return [f for f in frames if f["type"] == kind]
