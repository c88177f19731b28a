"""No process outlives its Toolkit: close(), garbage collection, interpreter exit."""

import gc
import subprocess
import sys
import textwrap

import execkit
from conftest import marker, processes_with, wait_for


def start_job(tk, word: str) -> str:
    """A background job whose bash keeps ``word`` on its command line (`; :` keeps bash from
    exec'ing sleep)."""
    result = tk.call("bash", {"command": f"sleep 300; : {word}", "async": True})
    assert result["isError"] is False, result
    wait_for(lambda: processes_with(word), "the job to start")
    return result["structuredContent"]["job_id"]


def start_kernel_child(tk, word: str) -> None:
    """A process the Python kernel started: it dies with the kernel's tree. (`; :` keeps bash
    from exec'ing sleep, which would drop the marker from the command line.)"""
    code = f"import subprocess\nchild = subprocess.Popen(['bash', '-c', 'sleep 300; : {word}'])"
    result = tk.call("eval", {"cells": [{"language": "py", "code": code}]})
    assert result["isError"] is False, result
    wait_for(lambda: processes_with(word), "the kernel's child to start")


def test_close_with_running_jobs_leaves_no_process(workdir, toolkit_vars):
    words = [marker(), marker(), marker()]
    tk = execkit.Toolkit(workdir, vars=toolkit_vars)
    start_job(tk, words[0])
    start_job(tk, words[1])
    start_kernel_child(tk, words[2])
    tk.close()
    for word in words:
        assert processes_with(word) == [], word


def test_leaving_the_with_block_closes(workdir, toolkit_vars):
    word = marker()
    with execkit.Toolkit(workdir, vars=toolkit_vars) as tk:
        start_job(tk, word)
    assert tk.closed
    assert processes_with(word) == []


def test_garbage_collected_toolkit_leaves_no_process(workdir, toolkit_vars):
    word = marker()
    tk = execkit.Toolkit(workdir, vars=toolkit_vars)
    start_job(tk, word)
    del tk
    gc.collect()
    assert processes_with(word) == []


def test_interpreter_exit_without_close_leaves_no_process(workdir, toolkit_vars):
    word = marker()
    kernel_code = f"import subprocess; subprocess.Popen(['bash', '-c', 'sleep 301; : {word}'])"
    script = textwrap.dedent(
        f"""
        import execkit
        tk = execkit.Toolkit({str(workdir)!r}, vars={toolkit_vars!r})
        tk.call("bash", {{"command": "sleep 300; : {word}", "async": True}})
        tk.call("eval", {{"cells": [{{"language": "py", "code": {kernel_code!r}}}]}})
        print("started", flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "started" in done.stdout
    assert processes_with(word) == []
