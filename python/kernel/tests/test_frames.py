"""Frame encoding: every frame is strict JSON and user text is never patched."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kernel_driver import KernelTestCase, of_type  # noqa: E402


class FrameText(KernelTestCase):
    def test_non_finite_floats_are_replaced_in_the_value_not_the_text(self):
        frames = self.k.run(
            "display({'application/json': {'a': float('nan'), 'b': [float('-inf')]},"
            " 'text/plain': 'NaN values and -inf and Infinity'}, raw=True)")
        shown = of_type(frames, "display")
        self.assertEqual(len(shown), 1, frames)
        data = shown[0]["data"]
        self.assertEqual(data["application/json"], {"a": None, "b": [None]})
        self.assertEqual(data["text/plain"], "NaN values and -inf and Infinity")


if __name__ == "__main__":
    unittest.main()
