"""call, acall, progress, artifacts and the Toolkit's options."""

import asyncio
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import execkit
from conftest import text_of


def test_call_returns_the_tool_result_dict(tk):
    result = tk.call("bash", {"command": "echo hi; exit 3"})
    assert set(result) == {"content", "structuredContent", "isError"}
    assert result["isError"] is True
    assert result["structuredContent"]["exit_code"] == 3
    assert result["content"][0]["type"] == "text"
    assert "hi" in result["content"][0]["text"]


def test_bad_calls_are_error_results_naming_the_field(tk):
    unknown = tk.call("nope", {})
    assert unknown["isError"] and 'Unknown tool "nope"' in text_of(unknown)
    ill_typed = tk.call("bash", {"command": 5})
    assert ill_typed["isError"] and "command" in text_of(ill_typed)
    missing = tk.call("bash")
    assert missing["isError"] and "command" in text_of(missing)


def test_arguments_that_are_not_json_raise_type_error(tk):
    with pytest.raises(TypeError):
        tk.call("bash", {"command": object()})


def test_cwd_is_the_base_of_every_call(tk, workdir):
    assert tk.cwd == workdir
    assert str(workdir) in text_of(tk.call("bash", {"command": "pwd"}))


def test_a_cwd_that_is_not_a_directory_fails_the_start(tmp_path):
    with pytest.raises(ValueError, match="not a directory"):
        execkit.Toolkit(tmp_path / "missing")


def test_vars_reach_knobs_and_children(workdir, toolkit_vars):
    toolkit_vars["EXECKIT_TEST_VALUE"] = "from vars"
    with execkit.Toolkit(workdir, vars=toolkit_vars) as tk:
        result = tk.call("bash", {"command": "echo $EXECKIT_TEST_VALUE"})
        assert "from vars" in text_of(result)
    with pytest.raises(ValueError, match="EXECKIT_KILL_GRACE_MS"):
        execkit.Toolkit(workdir, vars={"EXECKIT_KILL_GRACE_MS": "soon"})


def test_one_shot_refuses_async(workdir, toolkit_vars):
    with execkit.Toolkit(workdir, vars=toolkit_vars, one_shot=True) as tk:
        result = tk.call("bash", {"command": "true", "async": True})
        assert result["isError"] is True, result


def test_progress_callback_sees_the_growing_tail(tk):
    events = []
    command = "for i in 1 2 3 4; do echo line$i; sleep 0.3; done"
    result = tk.call("bash", {"command": command}, progress=events.append)
    assert result["isError"] is False
    assert events, "no progress event"
    assert {"elapsed_ms", "tail", "total_lines", "message"} <= set(events[-1])
    assert any("line" in e["tail"] for e in events), events


def test_toolkit_progress_is_the_default_and_a_raising_callback_is_unraisable(
    workdir, toolkit_vars, monkeypatch
):
    seen, unraisable = [], []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def broken(event):
        seen.append(event)
        raise RuntimeError("callback bug")

    with execkit.Toolkit(workdir, vars=toolkit_vars, progress=broken) as tk:
        result = tk.call("bash", {"command": "echo a; sleep 0.5; echo b"})
    assert result["isError"] is False and "b" in text_of(result)
    assert seen
    assert any("callback bug" in str(u.exc_value) for u in unraisable), unraisable


def test_calls_from_8_threads_run_at_once(tk):
    def one(n):
        return tk.call("bash", {"command": f"sleep 1; echo thread{n}"})

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(8)))
    elapsed = time.monotonic() - started
    for n, result in enumerate(results):
        assert f"thread{n}" in text_of(result), result
    # One after another would take 8 s; the GIL is released while each call runs.
    assert elapsed < 6, elapsed


def test_the_gil_is_released_while_a_call_runs(tk):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    counter = threading.Thread(target=count)
    counter.start()
    tk.call("bash", {"command": "sleep 1"})
    stop.set()
    counter.join()
    assert len(ticks) > 10, len(ticks)


def test_acall_returns_the_same_result(tk):
    async def main():
        return await asyncio.gather(
            tk.acall("bash", {"command": "echo one"}),
            tk.acall("eval", {"cells": [{"language": "py", "code": "1 + 1"}]}),
        )

    bash, py = asyncio.run(main())
    assert "one" in text_of(bash)
    assert "2" in text_of(py)


def test_read_artifact_selects_like_the_cli(tk):
    result = tk.call("bash", {"command": "seq 1 100000"})
    uri = re.search(r"artifact://[0-9a-f]{8}", text_of(result)).group(0)
    assert tk.read_artifact(uri, head=3).splitlines()[:3] == ["1", "2", "3"]
    assert "99999" in tk.read_artifact(uri + "?tail=2")
    assert "12345" in tk.read_artifact(uri, grep="^12345$")
    lines = tk.read_artifact(uri, lines="10-12")
    assert [line for line in lines.splitlines() if line.strip()][:3] == ["10", "11", "12"]
    raw = tk.read_artifact(uri, raw=True)
    assert isinstance(raw, bytes) and raw.startswith(b"1\n2\n") and raw.endswith(b"100000\n")


def test_read_artifact_errors_by_kind(tk):
    with pytest.raises(ValueError, match="Invalid artifact URI"):
        tk.read_artifact("artifact://nothex")
    with pytest.raises(FileNotFoundError):
        tk.read_artifact("artifact://00000000")
    with pytest.raises(ValueError):
        tk.read_artifact("artifact://00000000?head=1", tail=2)
    with pytest.raises(ValueError):
        tk.read_artifact("00000000", head=1, tail=2)


def test_closed_toolkit_refuses_calls(workdir):
    tk = execkit.Toolkit(workdir)
    assert not tk.closed
    tk.close()
    tk.close()
    assert tk.closed and "closed" in repr(tk)
    with pytest.raises(RuntimeError, match="closed"):
        tk.call("bash", {"command": "true"})


def test_doctor_lists_sections(tk):
    doctor = tk.doctor()
    assert {"execkit", "bash", "eval", "job"} <= set(doctor), doctor
