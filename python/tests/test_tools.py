"""Every tool the dispatcher lists, called through the module. A tool added to the dispatcher
is picked up here without a line of its own: it gets the generic checks, and a worked call
when one is listed in SAMPLE_CALLS."""

import json

import pytest

import execkit
from conftest import text_of

#: A call per tool that shows it working, and a word its text must contain.
SAMPLE_CALLS = {
    "bash": ({"command": "echo hello from bash"}, "hello from bash"),
    "eval": ({"cells": [{"language": "py", "code": "x = 20\nx + 22"}]}, "42"),
    "job": ({"list": True}, ""),
    # Needs no adapter: lists the (absent) session and the breakpoint set.
    "debug": ({"action": "sessions"}, "No debug session."),
}


def tool_names():
    with execkit.Toolkit() as tk:
        return [tool["name"] for tool in tk.tools()]


@pytest.mark.parametrize("name", tool_names())
def test_a_listed_tool_is_dispatched(tk, name):
    result = tk.call(name, {"no_such_argument": 1})
    assert result["isError"] is True
    assert "Unknown tool" not in text_of(result)
    assert "no_such_argument" in text_of(result), result


@pytest.mark.parametrize("name", tool_names())
def test_a_listed_tool_answers_a_sample_call(tk, name):
    if name not in SAMPLE_CALLS:
        pytest.skip(f"no sample call for {name} yet (its argument checks ran above)")
    args, expected = SAMPLE_CALLS[name]
    result = tk.call(name, args)
    assert result["isError"] is False, result
    assert expected in text_of(result), result


def test_eval_keeps_state_between_calls(tk):
    tk.call("eval", {"cells": [{"language": "py", "code": "kept = 'across calls'"}]})
    result = tk.call("eval", {"cells": [{"language": "py", "code": "kept"}]})
    assert "across calls" in text_of(result), result


def test_bash_async_becomes_a_job_the_job_tool_polls(tk):
    started = tk.call("bash", {"command": "echo from the job", "async": True})
    assert started["isError"] is False, started
    job_id = started["structuredContent"]["job_id"]
    polled = tk.call("job", {"poll": [job_id]})
    assert "from the job" in text_of(polled), polled


def test_javascript_cells_run_with_the_bundled_kernel(tk):
    schema = tk.tools()[[t["name"] for t in tk.tools()].index("eval")]["inputSchema"]
    offered = schema["properties"]["cells"]["items"]["properties"]["language"]["enum"]
    assert "js" in offered, offered
    result = tk.call("eval", {"cells": [{"language": "js", "code": "6 * 7"}]})
    assert result["isError"] is False, result
    assert "42" in text_of(result), result


def test_ssh_is_listed_only_when_hosts_are_configured(workdir, toolkit_vars):
    home = workdir.parent / "home"
    home.mkdir()
    with execkit.Toolkit(workdir, vars={**toolkit_vars, "HOME": str(home)}) as tk:
        assert "ssh" not in [tool["name"] for tool in tk.tools()]
        refused = tk.call("ssh", {"host": "web1", "command": "true"})
        assert refused["isError"] is True, refused
        assert "No ssh hosts are configured" in text_of(refused), refused
        config = {"hosts": {"web1": {"host": "127.0.0.1", "description": "front end"}}}
        (workdir / ".execkit").mkdir()
        (workdir / ".execkit" / "ssh.json").write_text(json.dumps(config))
        listed = {tool["name"]: tool for tool in tk.tools()}
        assert "ssh" in listed
        assert "web1" in listed["ssh"]["description"], listed["ssh"]
