"""Cell output capture (spec-eval.md P6): stdout and stderr as whole lines, in write order.

Everything written through Python (``print``, ``sys.stdout``/``sys.stderr``, ``logging``) goes
through one ``Merger``: each stream keeps its unfinished line to itself, and a line joins the
shared queue only when it is complete, so a line of one stream is never split by the other and
a line written to stderr after a line written to stdout arrives after it. Raw writes to fds 1
and 2 (C extensions, child processes) travel through two capture pipes whose relative order
cannot be recovered; their reader threads feed the same merger, so each stream keeps its own
order and whole lines. Before a Python-level write the kernel drains that stream's pipe, so
``print`` and ``os.write(1, ...)`` interleave as written.
"""

import codecs
import io
import os
import select
import threading
import time
from _queue import SimpleQueue

# A stream frame carries at most this many characters of non-ASCII text (<= 64 KiB of UTF-8).
FRAME_CHARS = 16384
# Bytes read from a capture pipe at a time.
READ_CHUNK = 16384
# Complete lines are sent once this much is queued, or after FLUSH_AFTER_S.
FLUSH_CHARS = 16384
FLUSH_AFTER_S = 0.05
# An unfinished line longer than this is sent as it is (memory stays bounded).
LINE_MAX = 65536
NAMES = ("stdout", "stderr")


class Merger:
    """Orders the output of both streams and hands it to ``forward(name, text)``."""

    def __init__(self, forward):
        self.forward = forward
        # Reentrant: a signal handler that prints may run while this thread holds the lock.
        self.lock = threading.RLock()
        self.queue = []
        self.queued = 0
        self.partial = {name: [] for name in NAMES}
        self.partial_len = {name: 0 for name in NAMES}
        # SimpleQueue.put is safe in a signal handler that interrupted this very call;
        # Event.set is not (its lock is not reentrant: a handler that prints would deadlock).
        self.wakeups = SimpleQueue()
        self.waking = False
        threading.Thread(target=self._timer, name="execkit-output", daemon=True).start()

    def write(self, name, text):
        if not text:
            return
        with self.lock:
            cut = text.rfind("\n") + 1
            if cut:
                pieces = self.partial[name]
                pieces.append(text[:cut])
                self._queue(name, "".join(pieces))
                self.partial[name], self.partial_len[name] = [], 0
                text = text[cut:]
            if text:
                self.partial[name].append(text)
                self.partial_len[name] += len(text)
                if self.partial_len[name] > LINE_MAX:
                    self._queue(name, "".join(self.partial[name]))
                    self.partial[name], self.partial_len[name] = [], 0
            if self.queued >= FLUSH_CHARS:
                self._flush(False)
            elif self.queue and not self.waking:
                self.waking = True
                self.wakeups.put(None)

    def _queue(self, name, text):
        if self.queue and self.queue[-1][0] == name:
            self.queue[-1][1].append(text)
        else:
            self.queue.append((name, [text]))
        self.queued += len(text)

    def flush(self, partial=True):
        """Sends the queued lines; with ``partial`` also unfinished ones (before a display,
        result, error or ``done`` frame, which must follow all earlier output)."""
        with self.lock:
            self._flush(partial)

    def _flush(self, partial):
        if partial:
            for name in NAMES:
                if self.partial[name]:
                    self._queue(name, "".join(self.partial[name]))
                    self.partial[name], self.partial_len[name] = [], 0
        queue, self.queue, self.queued = self.queue, [], 0
        raised = None
        for name, pieces in queue:
            text = "".join(pieces)
            # ASCII text is one byte per character: four times as much fits in a frame.
            step = FRAME_CHARS * 4 if text.isascii() else FRAME_CHARS
            for at in range(0, len(text), step):
                try:
                    self.forward(name, text[at:at + step])
                except BaseException as exc:  # noqa: BLE001
                    # A user's signal handler raised while its frame was written (the frame
                    # went out whole): the rest of the queue still goes, then the error.
                    raised = raised or exc
        if raised is not None:
            raise raised

    def _timer(self):
        while True:
            self.wakeups.get()
            time.sleep(FLUSH_AFTER_S)
            self.waking = False
            self.flush(False)


class Capture:
    """One captured fd (1 or 2): a private pipe, a reader thread, incremental UTF-8. The pipe's
    own descriptors sit at high numbers (``high.place``) and are rebuilt before a cell when
    user code closed them."""

    def __init__(self, name, target_fd, merger, high):
        self.name = name
        self.target_fd = target_fd
        self.merger = merger
        self.high = high
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.lock = threading.RLock()  # reentrant for the same reason as Merger.lock
        self.thread = None
        self._open()

    def _open(self):
        from _execkit_channel import ident

        r, w = os.pipe()
        self.r, self.w = self.high.place(r), self.high.place(w)
        # A second write end for sys.stdout.fileno(): it outlives os.close(1) in user code.
        self.w_private = self.high.place(os.dup(self.w))
        os.set_blocking(self.r, False)
        self.ids = (ident(self.r), ident(self.w))
        self.restore_fd()
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self._loop, name="execkit-" + self.name,
                                           daemon=True)
            self.thread.start()

    def repair(self):
        """Rebuilds the pipe when user code closed or replaced one of its descriptors."""
        from _execkit_channel import ident

        r_id, w_id = self.ids
        if ident(self.r) == r_id and ident(self.w) == w_id and ident(self.w_private) == w_id:
            return
        with self.lock:
            for fd in (self.r, self.w, self.w_private):
                if ident(fd) in self.ids:
                    os.close(fd)
            self._open()

    def restore_fd(self):
        os.dup2(self.w, self.target_fd)

    def _loop(self):
        while True:
            try:
                select.select([self.r], [], [])
            except (OSError, ValueError):
                return
            with self.lock:
                self._drain()

    def _drain(self):
        while True:
            try:
                data = os.read(self.r, READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # closed by user code; rebuilt before the next cell
            if not data:
                return
            self.merger.write(self.name, self.decoder.decode(data))

    def sync(self):
        """Moves everything already in the pipe into the merger."""
        with self.lock:
            self._drain()


class BinaryProxy:
    """``sys.stdout.buffer``: bytes decoded as UTF-8 with replacement."""

    def __init__(self, text):
        self._text = text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def write(self, data):
        self._text.write(self._decoder.decode(bytes(data)))
        return len(data)

    def flush(self):
        pass

    def writable(self):
        return True

    def fileno(self):
        return self._text.fileno()

    def isatty(self):
        return False


class TextProxy(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` of a cell: writes go to the merger in order."""

    encoding = "utf-8"
    line_buffering = True

    def __init__(self, capture, errors):
        super().__init__()
        self._capture = capture
        self._errors = errors
        self.buffer = BinaryProxy(self)
        self.name = "<%s>" % capture.name

    @property
    def errors(self):
        return self._errors

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._capture.w_private

    def reconfigure(self, **_kwargs):
        pass

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        self._capture.sync()
        self._capture.merger.write(self._capture.name, text)
        return len(text)
