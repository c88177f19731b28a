"""Ctrl-C and asyncio cancellation kill the call's process tree before the exception is raised."""

import asyncio
import os
import signal
import threading

import pytest

from conftest import marker, processes_with, wait_for


def long_command(word: str, ready) -> str:
    """A tree (bash, a child shell, sleep) that says when it has started. (`; :` keeps the child
    shell from exec'ing sleep, so the marker stays in a command line.)"""
    return f"bash -c 'sleep 300; : {word}' & touch {ready}; wait"


def test_ctrl_c_kills_the_call_then_raises_keyboard_interrupt(tk, tmp_path):
    word, ready = marker(), tmp_path / "ready"

    def interrupt_when_ready():
        wait_for(ready.exists, "the command to start")
        wait_for(lambda: processes_with(word), "the sleep to start")
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt_when_ready)
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tk.call("bash", {"command": long_command(word, ready)})
    finally:
        sender.join()
    assert processes_with(word) == []
    assert tk.call("bash", {"command": "echo still usable"})["isError"] is False


def test_cancelling_acall_kills_it_then_raises_cancelled_error(tk, tmp_path):
    word, ready = marker(), tmp_path / "ready"

    async def main():
        task = asyncio.ensure_future(tk.acall("bash", {"command": long_command(word, ready)}))
        while not (ready.exists() and processes_with(word)):
            assert not task.done(), task
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert processes_with(word) == []


def test_asyncio_wait_for_timeout_kills_the_call(tk):
    word = marker()

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(tk.acall("bash", {"command": f"sleep 300; : {word}"}), 1)

    asyncio.run(main())
    assert processes_with(word) == []
