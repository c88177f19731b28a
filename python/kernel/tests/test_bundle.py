"""Bundles of built-in values (spec-eval.md P10)."""

import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import bundle  # noqa: E402


class BuiltinText(unittest.TestCase):
    def test_a_long_list_is_cut_between_items_with_a_truthful_note(self):
        text = bundle.bundle(list(range(10 ** 6)))["text/plain"]
        head, note = text.split("\n[repr cut", 1)
        self.assertTrue(re.search(r" \d+, …$", head), head[-40:])
        last = int(re.findall(r"\d+", head)[-1])
        self.assertTrue(head.endswith(", %d, %d, …" % (last - 1, last)), head[-40:])
        self.assertIn("of 7888890 characters; the rest was never sent", note)

    def test_describe_flags_a_cut_value_and_keeps_json(self):
        data, meta = bundle.describe("x" * 100000)
        self.assertTrue(meta["cut"])
        data, meta = bundle.describe({"a": (1, None)})
        self.assertEqual(data, {"text/plain": "{'a': (1, None)}"})
        self.assertEqual(meta, {"json": {"a": (1, None)}})
        self.assertEqual(bundle.describe({1: "a"})[1], None)


if __name__ == "__main__":
    unittest.main()
