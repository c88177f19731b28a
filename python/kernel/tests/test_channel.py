"""User code that closes descriptors does not break the protocol channel (spec-eval.md E28)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import channel  # noqa: E402
from kernel_driver import KernelTestCase, of_type, stdout  # noqa: E402


class GuardedFd(unittest.TestCase):
    def test_a_closed_copy_is_put_back_from_the_backup(self):
        r, w = os.pipe()
        guarded = channel.Guarded(channel.HighFds(), w)
        number = guarded.fd
        os.close(number)
        self.assertTrue(guarded.repair())
        self.assertEqual(guarded.fd, number)
        os.write(guarded.fd, b"x")
        self.assertEqual(os.read(r, 1), b"x")
        os.close(guarded.backup)
        self.assertTrue(guarded.repair())
        os.close(guarded.fd)
        self.assertTrue(guarded.repair())
        os.write(guarded.fd, b"y")
        self.assertEqual(os.read(r, 1), b"y")
        for fd in guarded.numbers() + (r,):
            os.close(fd)

    def test_descriptors_sit_beyond_a_daemon_closerange(self):
        high = channel.HighFds()
        r, w = os.pipe()
        placed = high.place(w)
        self.assertGreaterEqual(placed, 1024 if high.soft > 1024 + channel.SPARE else 100)
        os.close(placed)
        os.close(r)


class ClosingIdioms(KernelTestCase):
    def test_closerange_then_output_and_next_cells(self):
        frames = self.k.run("import os\nos.closerange(3, 1024)\nprint('after')")
        self.assertEqual(stdout(frames), "after\n")
        self.assertEqual(of_type(frames, "done")[0]["status"], "ok")
        frames = self.k.run("import os, subprocess\nos.write(1, b'raw\\n')\n"
                            "subprocess.run(['echo', 'child'])\nprint('py')")
        self.assertEqual(stdout(frames), "raw\nchild\npy\n")

    def test_close_3_and_4(self):
        frames = self.k.run("import os\nfor fd in (3, 4):\n    try:\n        os.close(fd)\n"
                            "    except OSError:\n        pass\nprint('still here')")
        self.assertEqual(stdout(frames), "still here\n")
        self.assertEqual(stdout(self.k.run("print(1 + 1)")), "2\n")


if __name__ == "__main__":
    unittest.main()
