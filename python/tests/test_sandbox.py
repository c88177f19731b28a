"""The sandbox policy and the escalation approver through ``Toolkit(...)`` keywords: real
Landlock and seccomp on the bash tool's processes, a Python callable answering escalations."""

import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pytest

import execkit
from conftest import text_of


@pytest.fixture
def outside():
    """A writable directory outside /tmp and the workspace, so outside every writable root."""
    base = "/dev/shm" if Path("/dev/shm").is_dir() else str(Path.home())
    directory = Path(tempfile.mkdtemp(prefix="execkit-test-", dir=base)).resolve()
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def confined(workdir, toolkit_vars, **options):
    return execkit.Toolkit(workdir, vars=toolkit_vars, sandbox="workspace-write", **options)


def escalated(command: str) -> dict:
    return {
        "command": command,
        "sandbox_permissions": "require_escalated",
        "justification": "writes a file outside the workspace",
    }


def test_a_write_outside_the_roots_is_denied_in_workspace_write_mode(
    workdir, toolkit_vars, outside
):
    target = outside / "denied.txt"
    with confined(workdir, toolkit_vars) as tk:
        result = tk.call("bash", {"command": f"echo x > {target}"})
        assert not target.exists()
        report = result["structuredContent"]["sandbox"]
        assert report["mode"] == "workspace-write", report
        assert report["network"] == "off", report
        assert report["denied"] is True, text_of(result)
        inside = tk.call("bash", {"command": "echo in > f.txt && cat f.txt"})
        assert text_of(inside) == "in", inside


def test_writable_roots_and_network_pass_through(workdir, toolkit_vars, outside):
    target = outside / "allowed.txt"
    with confined(workdir, toolkit_vars, network="on", writable=[outside]) as tk:
        result = tk.call("bash", {"command": f"echo x > {target}"})
        assert result["isError"] is False, result
        report = result["structuredContent"]["sandbox"]
        assert report["network"] == "on", report
        assert str(outside) in report["writable_roots"], report
    assert target.read_text() == "x\n"


def test_a_bad_policy_stops_the_start_with_one_line(workdir, toolkit_vars):
    with pytest.raises(ValueError, match="sometimes"):
        execkit.Toolkit(workdir, vars=toolkit_vars, sandbox="sometimes")
    with pytest.raises(ValueError, match="does/not/exist"):
        confined(workdir, toolkit_vars, writable=["/does/not/exist"])


def test_an_escalated_call_approved_by_the_callback_runs(workdir, toolkit_vars, outside):
    target = outside / "approved.txt"
    asked = []

    def approve(request):
        asked.append(request)
        return "once"

    with confined(workdir, toolkit_vars, approve=approve) as tk:
        result = tk.call("bash", escalated(f"echo yes > {target}"))
        assert result["isError"] is False, result
    assert target.read_text() == "yes\n"
    [request] = asked
    assert request["command"] == f"echo yes > {target}"
    assert request["justification"] == "writes a file outside the workspace"
    assert request["message"].startswith("Allow this command to run outside the sandbox?")


def test_a_session_approval_is_asked_once(workdir, toolkit_vars, outside):
    target = outside / "session.txt"
    asked = []

    def approve(request):
        asked.append(request)
        return "session"

    with confined(workdir, toolkit_vars, approve=approve) as tk:
        for _ in range(2):
            result = tk.call("bash", escalated(f"echo again >> {target}"))
            assert result["isError"] is False, result
    assert len(asked) == 1
    assert target.read_text() == "again\nagain\n"


@pytest.fixture
def unraisable(monkeypatch):
    """What the Toolkit reports through ``sys.unraisablehook`` during the test."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda report: reported.append(report.exc_value))
    return reported


@pytest.mark.parametrize("answer", ["decline", False, None])
def test_a_declined_escalation_runs_nothing(workdir, toolkit_vars, outside, answer):
    target = outside / "declined.txt"
    with confined(workdir, toolkit_vars, approve=lambda request: answer) as tk:
        result = tk.call("bash", escalated(f"touch {target}"))
    assert result["isError"] is True, result
    assert "declined" in text_of(result), result
    assert not target.exists()


def test_a_raising_callback_declines_and_is_reported(
    workdir, toolkit_vars, outside, unraisable
):
    target = outside / "raised.txt"

    def approve(request):
        raise RuntimeError("no person at the keyboard")

    with confined(workdir, toolkit_vars, approve=approve) as tk:
        result = tk.call("bash", escalated(f"touch {target}"))
    assert result["isError"] is True, result
    assert "declined" in text_of(result), result
    assert not target.exists()
    assert [str(e) for e in unraisable] == ["no person at the keyboard"]


def test_an_unknown_answer_declines_and_names_it(workdir, toolkit_vars, outside, unraisable):
    target = outside / "unknown.txt"
    with confined(workdir, toolkit_vars, approve=lambda request: "maybe") as tk:
        result = tk.call("bash", escalated(f"touch {target}"))
    assert result["isError"] is True, result
    assert "declined" in text_of(result), result
    assert not target.exists()
    [error] = unraisable
    assert isinstance(error, ValueError)
    assert "not 'maybe'" in str(error)


def test_a_callback_that_does_not_answer_times_out(workdir, toolkit_vars, outside):
    target = outside / "silent.txt"
    release = threading.Event()
    toolkit_vars = {**toolkit_vars, "EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S": "1"}
    try:
        with confined(workdir, toolkit_vars, approve=lambda request: release.wait(60)) as tk:
            result = tk.call("bash", escalated(f"touch {target}"))
    finally:
        release.set()
    assert result["isError"] is True, result
    assert "did not answer within 1 second" in text_of(result), result
    assert not target.exists()


def test_without_a_callback_an_escalation_is_refused(workdir, toolkit_vars, outside):
    target = outside / "refused.txt"
    with confined(workdir, toolkit_vars) as tk:
        result = tk.call("bash", escalated(f"touch {target}"))
    assert result["isError"] is True, result
    assert "cannot ask a person" in text_of(result), result
    assert not target.exists()
