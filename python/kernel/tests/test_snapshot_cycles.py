"""Parking twice: a restored kernel must be parkable and restorable again (spec-eval.md P19)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kernel_driver import Kernel, stdout  # noqa: E402


def park(kernel, path, frame_id):
    kernel.send({"type": "snapshot", "id": frame_id, "path": path})
    done = kernel.next_frame()
    assert done["type"] == "snapshot_done", done
    return done


def unpark(path, frame_id):
    kernel = Kernel()
    kernel.send({"type": "restore", "id": frame_id, "path": path})
    done = kernel.next_frame()
    assert done["type"] == "restore_done", done
    return kernel, done


class TwoCycles(unittest.TestCase):
    def test_functions_and_classes_survive_two_park_restore_cycles(self):
        first = Kernel()
        path = os.path.join(tempfile.mkdtemp(prefix="execkit-park-"), "snap.pickle")
        first.run("def f(x):\n    return x + 1\nclass P:\n    def __init__(self, v):\n"
                  "        self.v = v\nitems = [P(1)]\nn = f(1)")
        park(first, path, 1)
        first.close()
        second, done = unpark(path, 2)
        try:
            self.assertEqual(done["failed"], [])
            second.run("n = f(n) * 10\nitems.append(P(n))")
            saved = park(second, path, 3)
            self.assertIn("f", saved["saved"])
            self.assertIn("P", saved["saved"])
        finally:
            second.close()
        third, done = unpark(path, 4)
        try:
            self.assertEqual(done["failed"], [])
            frames = third.run("print(n, f(n), [p.v for p in items], type(items[0]).__name__)")
            self.assertEqual(stdout(frames), "30 31 [1, 30] P\n")
        finally:
            third.close()


if __name__ == "__main__":
    unittest.main()
