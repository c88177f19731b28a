"""Output order: whole lines, in write order, labels kept (spec-eval.md P6)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kernel_driver import KernelTestCase, of_type  # noqa: E402


def streams(frames):
    """(name, line) pairs in arrival order."""
    out = []
    for f in of_type(frames, "stream"):
        for line in f["text"].splitlines():
            out.append((f["name"], line))
    return out


class StreamOrder(KernelTestCase):
    def test_print_to_both_streams_keeps_lines_whole_and_in_order(self):
        frames = self.k.run("import sys\nfor i in range(3):\n    print('out', i)\n"
                            "    print('err', i, file=sys.stderr)")
        self.assertEqual(streams(frames), [
            ("stdout", "out 0"), ("stderr", "err 0"), ("stdout", "out 1"),
            ("stderr", "err 1"), ("stdout", "out 2"), ("stderr", "err 2")])

    def test_logging_and_sys_writes_interleave_in_order(self):
        frames = self.k.run(
            "import logging, sys\nlog = logging.getLogger('t')\n"
            "log.addHandler(logging.StreamHandler(sys.stderr))\n"
            "sys.stdout.write('a'); sys.stdout.write('b\\n')\nlog.warning('w1')\n"
            "sys.stdout.write('c\\n')\nsys.stderr.write('e'); print('d')\n"
            "sys.stderr.write('f\\n')")
        self.assertEqual(streams(frames), [
            ("stdout", "ab"), ("stderr", "w1"), ("stdout", "c"), ("stdout", "d"),
            ("stderr", "ef")])

    def test_raw_fd_writes_keep_whole_lines_per_stream(self):
        frames = self.k.run(
            "import os\nfor i in range(200):\n    os.write(1, b'o' * 50 + b'%d\\n' % i)\n"
            "    os.write(2, b'e' * 50 + b'%d\\n' % i)")
        got = streams(frames)
        self.assertEqual([t for n, t in got if n == "stdout"],
                         ["o" * 50 + str(i) for i in range(200)])
        self.assertEqual([t for n, t in got if n == "stderr"],
                         ["e" * 50 + str(i) for i in range(200)])

    def test_print_and_fd_writes_on_stdout_keep_write_order(self):
        frames = self.k.run("import os\nprint('a', end='')\nos.write(1, b'b\\n')\nprint('c')")
        self.assertEqual(streams(frames), [("stdout", "ab"), ("stdout", "c")])

    def test_a_signal_handler_that_prints_does_not_deadlock(self):
        frames = self.k.run(
            "import signal\nticks = []\n"
            "def tick(*_):\n    ticks.append(1)\n    print('tick')\n"
            "signal.signal(signal.SIGALRM, tick)\n"
            "signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)\n"
            "for i in range(20000):\n    print('line', i)\n"
            "signal.setitimer(signal.ITIMER_REAL, 0)\nprint('ticks', len(ticks) > 0)",
            timeout_ms=20000)
        self.assertEqual(of_type(frames, "done")[0]["status"], "ok")
        self.assertIn("ticks True", [t for _, t in streams(frames)])

    def test_a_signal_handler_that_raises_between_cells_does_not_end_the_kernel(self):
        # A 1 ms timer whose handler raises, left ticking when the cell ends: it fires while the
        # kernel writes the cell's frames and waits for the next command. Such a signal waits
        # for the next cell, where its handler's error is that cell's. The timer stops itself
        # after 50 raises; until then cells may fail with its error, and the kernel stays.
        self.k.run(
            "import signal\nraised = [0]\n"
            "def boom(*_):\n    raised[0] += 1\n"
            "    if raised[0] >= 50:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n"
            "    raise ZeroDivisionError('from the handler')\n"
            "signal.signal(signal.SIGALRM, boom)\n"
            "signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)")
        for _ in range(500):
            frames = self.k.run("raised[0]")
            self.assertEqual(len(of_type(frames, "done")), 1, "the kernel is gone")
            results = of_type(frames, "result")
            if results and results[0]["data"]["text/plain"] == "50":
                break
        self.assertEqual(results[0]["data"]["text/plain"], "50")
        frames = self.k.run("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_DFL)\n"
                            "print('alive')")
        self.assertEqual(of_type(frames, "done")[0]["status"], "ok")
        self.assertIn("alive", [t for _, t in streams(frames)])


if __name__ == "__main__":
    unittest.main()
