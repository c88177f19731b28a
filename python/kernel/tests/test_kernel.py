"""Runner-level tests: the real runner.py driven over its pipes, plus the magic scanner.

Run with ``python3 -m unittest discover -s python/kernel/tests`` (or pytest).
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import magics  # noqa: E402
from kernel_driver import Kernel, KernelTestCase, of_type, stderr, stdout  # noqa: E402


class ScannerTests(unittest.TestCase):
    def same(self, src):
        self.assertEqual(magics.transform(src), src)

    def test_valid_python_is_never_rewritten(self):
        self.same('x = """\n%d items\n!not a shell\n""" % 3')
        self.same("y = (a\n    % b)")
        self.same("z = (a\n    != b)")
        self.same("s = 'it''s' \\\n    % 3")
        self.same("t = rb'''\n%x\n'''")
        self.same("u = f\"{a!r}\" % b")
        self.same("# %comment\nv = 1")
        self.same("w = [\n!x\n]")

    def test_magics_keep_line_numbers(self):
        src = "a = 1\n  %cd /tmp\nb = !ls\n!echo hi\nc = %pwd"
        out = magics.transform(src)
        self.assertEqual(len(out.split("\n")), len(src.split("\n")))
        self.assertIn("  _ek_magic_('cd', '/tmp')", out)
        self.assertIn("b = _ek_shell_('ls', capture=True)", out)
        self.assertIn("_ek_shell_('echo hi')", out)
        self.assertIn("c = _ek_magic_('pwd', '')", out)

    def test_cell_magic_only_first(self):
        out = magics.transform("\n%%bash\necho 1\necho 2")
        self.assertEqual(out.count("\n"), 3)
        with self.assertRaises(magics.UsageError):
            magics.transform("x = 1\n%%bash\necho")

    def test_backslash_continuation_is_not_a_magic(self):
        self.same("x = 1 + \\\n%d")


class KernelTests(KernelTestCase):
    def test_ready_frame(self):
        ready = self.k.ready
        self.assertEqual(ready["type"], "ready")
        self.assertEqual(ready["protocol"], 1)
        self.assertEqual(ready["language"], "python")

    def test_output_order_is_production_order(self):
        frames = self.k.run(
            "import os, subprocess\nprint('a')\nos.write(1, b'b\\n')\n"
            "subprocess.run(['echo', 'c'])\ndisplay(1)\nprint('d')")
        kinds = [(f["type"], f.get("text") or f.get("data", {}).get("text/plain"))
                 for f in frames if f["type"] in ("stream", "display")]
        at = [k for k, _ in kinds].index("display")
        self.assertEqual("".join(t for _, t in kinds[:at]), "a\nb\nc\n")
        self.assertEqual(kinds[at][1], "1")
        self.assertEqual("".join(t for _, t in kinds[at + 1:]), "d\n")

    def test_traceback_has_no_runner_frames(self):
        frames = self.k.run("def f():\n    raise KeyError('name')\nf()")
        err = of_type(frames, "error")[0]
        self.assertEqual(err["ename"], "KeyError")
        joined = "\n".join(err["traceback"])
        self.assertIn('File "<cell-', joined)
        self.assertNotIn("runner.py", joined)
        self.assertEqual(of_type(frames, "done")[0]["status"], "error")

    def test_stdin_fails_fast(self):
        start = time.monotonic()
        frames = self.k.run("import sys\nsys.stdin.read()")
        self.assertLess(time.monotonic() - start, 1.0)
        self.assertEqual(of_type(frames, "error")[0]["ename"], "StdinNotAvailable")

    def test_tool_call_round_trip(self):
        def reply(kernel, frame):
            if frame["type"] == "tool_call":
                kernel.send({"type": "tool_result", "call_id": frame["call_id"],
                             "result": {"content": [{"type": "text", "text": "hi"}],
                                        "isError": False}})

        frames = self.k.run("print(tool.bash({'command': 'x'}).text)", tools=["bash"],
                            on_frame=reply)
        self.assertEqual(stdout(frames), "hi\n")
        call = of_type(frames, "tool_call")[0]
        self.assertEqual(call["name"], "bash")
        self.assertEqual(call["args"], {"command": "x"})

    def test_withheld_tool_reply_raises(self):
        start = time.monotonic()
        frames = self.k.run("try:\n    tool.bash()\nexcept ToolError as e:\n    print(e)",
                            timeout_ms=100, tools=["bash"])
        self.assertEqual(stdout(frames), "tool call bash got no reply\n")
        self.assertLess(time.monotonic() - start, 7.0)

    def test_between_cells_output_is_kept(self):
        self.k.run("import threading, time, sys\n"
                   "threading.Timer(0.2, lambda: print('late')).start()")
        time.sleep(0.5)
        frames = self.k.run("print('now')")
        self.assertEqual(stdout(frames), "[output produced between cells]\nlate\nnow\n")

    def test_snapshot_round_trip(self):
        path = os.path.join(self.k.dir, "snap.pickle")
        self.k.run("import json as j\nclass P:\n    def __init__(self, v): self.v = v\n"
                   "data = {'a': 1}\ninst = P(3)\ngen = (i for i in range(3))")
        self.k.send({"type": "snapshot", "id": 900, "path": path})
        done = self.k.next_frame()
        self.assertEqual(done["type"], "snapshot_done")
        self.assertIn("data", done["saved"])
        self.assertIn("P", done["saved"])
        self.assertIn("gen", [s["name"] for s in done["skipped"]])
        other = Kernel()
        try:
            other.send({"type": "restore", "id": 901, "path": path})
            restored = other.next_frame()
            self.assertEqual(restored["type"], "restore_done")
            frames = other.run("print(j.dumps(data), inst.v)")
            self.assertEqual(stdout(frames), '{"a": 1} 3\n')
        finally:
            other.close()

    def test_cell_magics(self):
        path = os.path.join(self.k.dir, "sub", "f.txt")
        frames = self.k.run("%%writefile " + path + "\nhello")
        self.assertEqual(stdout(frames), "Wrote 5 bytes to %s\n" % path)
        frames = self.k.run("%%capture cap\nprint('hidden')\ndisplay(1)")
        self.assertEqual(stdout(frames), "")
        frames = self.k.run("print(repr(cap.stdout), len(cap.outputs))")
        self.assertEqual(stdout(frames), "'hidden\\n' 1\n")
        frames = self.k.run("%timeit -n 10 -r 2 sum(range(10))")
        self.assertIn("per loop (mean ± std. dev. of 2 runs, 10 loops each)", stdout(frames))
        frames = self.k.run("%time 1 + 1")
        self.assertIn("Wall time: ", stdout(frames))
        self.assertEqual(of_type(frames, "result")[0]["data"]["text/plain"], "2")

    def test_who_skips_prelude_and_modules(self):
        self.k.run("%reset\nimport os\nalpha = 1\n_hidden = 2")
        frames = self.k.run("%who")
        self.assertEqual(stdout(frames), "alpha\n")

    def test_stderr_is_separate(self):
        frames = self.k.run("import sys\nprint('e', file=sys.stderr)")
        self.assertEqual(stderr(frames), "e\n")


if __name__ == "__main__":
    unittest.main()
