"""Tracebacks show the user's code only; asyncio in synchronous cells explains itself."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from kernel_driver import KernelTestCase, of_type, stdout  # noqa: E402


class Tracebacks(KernelTestCase):
    def error(self, code):
        errors = of_type(self.k.run(code), "error")
        self.assertEqual(len(errors), 1, code)
        return errors[0], "\n".join(errors[0]["traceback"])

    def assert_no_internal_frames(self, text):
        for internal in ("magics.py", "runner.py", "prelude.py", "asyncio" + os.sep):
            self.assertNotIn(internal, text)

    def test_failing_bash_magic(self):
        err, text = self.error("%%bash\nexit 3")
        self.assertEqual(err["ename"], "CalledProcessError")
        self.assert_no_internal_frames(text)

    def test_unknown_magic(self):
        err, text = self.error("%nope")
        self.assertEqual(err["ename"], "UsageError")
        self.assert_no_internal_frames(text)
        self.assertIn('File "<cell-', text)

    def test_awaited_timeout(self):
        err, text = self.error("import asyncio\nawait asyncio.wait_for(asyncio.sleep(10), 0.05)")
        self.assertIn(err["ename"], ("TimeoutError", "CancelledError"))
        self.assert_no_internal_frames(text)

    def test_tasks_in_a_synchronous_cell_say_to_await(self):
        for code in ("import asyncio\nasyncio.ensure_future(asyncio.sleep(0))",
                     "import asyncio\nasyncio.get_event_loop().create_task(asyncio.sleep(0))"):
            err, _ = self.error(code)
            self.assertEqual(err["ename"], "RuntimeError")
            self.assertIn("stopped between cells", err["evalue"])
            self.assertIn("await asyncio.gather(...)", err["evalue"])
        frames = self.k.run("import asyncio\nasync def f():\n    return 7\nprint(asyncio.run(f()))")
        self.assertEqual(stdout(frames), "7\n")
        frames = self.k.run("t = asyncio.ensure_future(f())\nprint(await t)")
        self.assertEqual(stdout(frames), "7\n")


if __name__ == "__main__":
    unittest.main()
