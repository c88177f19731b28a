"""Fixtures for the package tests. They run against the installed wheel, never the source
tree: see test_package.py, which fails when ``execkit`` comes from python/execkit."""

import os
import time
import uuid
from pathlib import Path

import pytest

import execkit

#: Generous: the machines running these tests are shared and often busy.
DEADLINE_S = 30.0


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def toolkit_vars(tmp_path: Path) -> dict:
    """Every Toolkit of a test keeps its artifacts in the test's own directory."""
    return {"EXECKIT_ARTIFACT_DIR": str(tmp_path / "artifacts")}


@pytest.fixture
def tk(workdir: Path, toolkit_vars: dict):
    with execkit.Toolkit(workdir, vars=toolkit_vars) as toolkit:
        yield toolkit


def marker() -> str:
    """A word no other process on the machine has in its command line."""
    return f"execkit-test-{uuid.uuid4().hex}"


def processes_with(word: str) -> list:
    """Pids whose command line or environment holds ``word`` (not this process)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                data = Path("/proc", entry, part).read_bytes()
            except OSError:
                continue
            if word.encode() in data:
                found.append(int(entry))
                break
    return found


def wait_for(condition, what: str, deadline_s: float = DEADLINE_S):
    """Polls ``condition`` until it holds; fails naming ``what`` after the deadline."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out after {deadline_s} s waiting for {what}")


def text_of(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
