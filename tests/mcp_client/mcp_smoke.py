#!/usr/bin/env python3
"""End-to-end check of `execkit mcp` with the official MCP Python client.

Usage: mcp_smoke.py <path-to-execkit>

Drives a real server over stdio: the tool list, a bash call, progress notifications (only for a
request with a progress token), artifact resources (list and read, with and without a query),
cancellation of a running call (no response follows), and the server's shutdown on stdin EOF,
SIGTERM, SIGINT and SIGHUP, each leaving no process behind. Prints one
`ok <check>` line per check and `ALL OK` at the end; any failure raises and exits non-zero.

EXECKIT_ARTIFACT_DIR and HOME are passed through, so a caller can keep the run away from
~/.execkit.
"""

import base64
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

PASSED_ENV = ("EXECKIT_ARTIFACT_DIR", "HOME")
# Long enough to outlive every check; a unique fraction names the process in /proc.
SLEEP_SECONDS = 100


def check(condition: bool, what: str, detail: object = "") -> None:
    if not condition:
        raise AssertionError(f"{what}: {detail}")
    print(f"ok {what}", flush=True)


def server_env() -> dict[str, str]:
    return {key: os.environ[key] for key in PASSED_ENV if key in os.environ}


def unique_sleep() -> str:
    """`sleep 100.<random>`: a command line no other process on the machine has."""
    return f"sleep {SLEEP_SECONDS}.{random.randrange(10**8):08d}"


def pids_running(cmdline: str) -> list[int]:
    """Pids whose argv joined with spaces is exactly `cmdline` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().rstrip(b"\0").split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if b" ".join(argv).decode(errors="replace") == cmdline and state != b"Z":
            found.append(int(entry))
    return found


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def session_checks(execkit: str) -> None:
    params = StdioServerParameters(command=execkit, args=["mcp"], env=server_env())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "execkit", "initialize names the server", init.server_info)
            check(init.capabilities.tools is not None, "tools capability")
            check(init.capabilities.resources is not None, "resources capability")

            listing = await session.list_tools()
            tools = {tool.name: tool for tool in listing.tools}
            check({"bash", "job"} <= set(tools), "tools/list has bash and job", sorted(tools))
            bash_schema = tools["bash"].input_schema
            check(bash_schema.get("type") == "object", "bash schema is an object", bash_schema)
            check("command" in bash_schema.get("properties", {}), "bash schema has command", bash_schema)
            check(bool(tools["bash"].description), "bash has a description")
            check(tools["job"].input_schema.get("type") == "object", "job schema is an object")

            result = await session.call_tool("bash", {"command": "echo hello"})
            check(not result.is_error, "echo hello is not an error", result)
            check(text_of(result) == "hello", "echo hello text", text_of(result))
            structured = result.structured_content or {}
            check(structured.get("exit_code") == 0, "echo hello exit_code 0", structured)

            result = await session.call_tool("bash", {"command": "exit 3"})
            check(result.is_error, "exit 3 is an error", result)
            check((result.structured_content or {}).get("exit_code") == 3, "exit 3 exit_code")

            events: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                events.append((progress, total, message))

            slow = "for i in 1 2 3 4 5; do echo $i; sleep 0.3; done"
            result = await session.call_tool("bash", {"command": slow}, progress_callback=on_progress)
            check(not result.is_error, "slow loop succeeds", result)
            check(text_of(result).split() == ["1", "2", "3", "4", "5"], "slow loop text", text_of(result))
            check(len(events) >= 1, "progress notifications arrived", events)
            progresses = [progress for progress, _, _ in events]
            check(progresses == sorted(progresses), "progress increases", progresses)
            print(f"   {len(events)} progress notifications; last message: {events[-1][2]!r}")

            result = await session.call_tool("bash", {"command": "seq 1 300000"})
            check(not result.is_error, "seq 1 300000 succeeds", result)
            match = re.search(r"artifact://[0-9a-f]{8}", text_of(result))
            check(match is not None, "seq output cites an artifact", text_of(result)[-500:])
            uri = match.group(0)

            whole = await session.read_resource(uri)
            text = whole.contents[0].text
            check(text.startswith("1\n2\n3\n"), "resources/read without a query starts at line 1", text[:50])
            check("300000" in text, "resources/read without a query shows the last line", text[-200:])
            check(len(text) < 1_000_000, "resources/read without a query is a window", len(text))

            part = await session.read_resource(uri + "?lines=1-5")
            lines = part.contents[0].text.splitlines()
            check(lines[:5] == ["1", "2", "3", "4", "5"], "?lines=1-5 gives lines 1-5", lines[:8])
            check("6" not in lines, "?lines=1-5 stops at line 5", lines[:8])

            tail = await session.read_resource(uri + "?tail=2")
            check(tail.contents[0].text.splitlines()[:2] == ["299999", "300000"], "?tail=2", tail)

            missing = "artifact://00000000" if not uri.endswith("00000000") else "artifact://00000001"
            try:
                await session.read_resource(missing)
                raise AssertionError("reading a missing artifact succeeded")
            except MCPError as err:
                check("not found" in str(err), "a missing artifact is a not-found error", err)
            for bad in ("artifact://../etc/passwd", "file:///etc/passwd", uri + "?lines=banana"):
                try:
                    await session.read_resource(bad)
                    raise AssertionError(f"reading {bad} succeeded")
                except MCPError as err:
                    print(f"   {bad}: {err}")
            check(True, "malformed artifact URIs and queries are errors")

            scratch = tempfile.mkdtemp(prefix="mcp_smoke_")
            copy = os.path.join(scratch, "small.bin")
            result = await session.call_tool("bash", {"command": f"head -c 5000 /dev/urandom | tee {copy}"})
            match = re.search(r"artifact://[0-9a-f]{8}", text_of(result))
            check(match is not None, "binary output is saved as an artifact", text_of(result))
            blob = (await session.read_resource(match.group(0))).contents[0]
            check(getattr(blob, "blob", None) is not None, "a small binary artifact is a blob", blob)
            with open(copy, "rb") as f:
                check(base64.b64decode(blob.blob) == f.read(), "the blob is the exact bytes")
            check(blob.mime_type == "application/octet-stream", "the blob has its MIME type", blob.mime_type)
            shutil.rmtree(scratch)

            result = await session.call_tool("bash", {"command": "head -c 2000000 /dev/urandom"})
            big = re.search(r"artifact://([0-9a-f]{8})", text_of(result))
            check(big is not None, "big binary output is saved as an artifact", text_of(result))
            note = (await session.read_resource(big.group(0))).contents[0]
            check(getattr(note, "blob", None) is None, "a binary artifact over 1 MiB is not a blob")
            check(f"execkit artifact {big.group(1)} --raw" in note.text, "it names the CLI instead", note.text)

            resources = await session.list_resources()
            listed = {str(resource.uri): resource for resource in resources.resources}
            check(uri in listed, "resources/list has the artifact", sorted(listed))
            check(len(listed) <= 100, "a resources/list page holds at most 100")
            check((listed[uri].size or 0) == len("".join(f"{n}\n" for n in range(1, 300001))),
                  "resource size is the stored bytes", listed[uri])

            sleeper = unique_sleep()
            with anyio.move_on_after(20) as scope:
                async with anyio.create_task_group() as group:
                    async def cancel_when_running() -> None:
                        await anyio.to_thread.run_sync(lambda: wait_until(lambda: pids_running(sleeper), 10))
                        group.cancel_scope.cancel()

                    group.start_soon(cancel_when_running)
                    await session.call_tool("bash", {"command": sleeper})
                    raise AssertionError("the sleeping call returned instead of being cancelled")
            check(not scope.cancelled_caught, "the cancelled call ended promptly")
            gone = await anyio.to_thread.run_sync(lambda: wait_until(lambda: not pids_running(sleeper), 5))
            check(gone, "notifications/cancelled killed the sleep", pids_running(sleeper))

            result = await session.call_tool("bash", {"command": "echo still here"})
            check(text_of(result) == "still here", "the server serves after a cancellation", result)

            await job_checks(session)
            await eval_checks(session)


async def job_checks(session: ClientSession) -> None:
    """Background jobs through the job tool: start, poll to the end, list, cancel, unknown ids."""
    started = await session.call_tool("bash", {"command": "echo begun; sleep 0.5; echo ended", "async": True})
    job = (started.structured_content or {}).get("job_id")
    check(not started.is_error and job is not None, "an async bash call starts a job", started)
    check(text_of(started).startswith(f"Started background job {job} "), "the start text names the job", text_of(started))
    polled = await session.call_tool("job", {"poll": [job]})
    text = text_of(polled)
    check(not polled.is_error, "polling the job succeeds", polled)
    check(f"### {job} · completed · exit 0" in text, "the poll reports the job completed", text)
    check(text.endswith("begun\nended"), "the poll shows the job's output", text)

    sleeper = unique_sleep()
    long_job = await session.call_tool("bash", {"command": sleeper, "async": True})
    long_id = (long_job.structured_content or {}).get("job_id")
    check(wait_until(lambda: pids_running(sleeper), 10), "the long job's process runs", sleeper)
    listed = await session.call_tool("job", {"list": True})
    check(f"{long_id}  running" in text_of(listed), "job list shows the running job", text_of(listed))
    cancelled = await session.call_tool("job", {"cancel": [long_id]})
    check(f"{long_id}: cancelled after" in text_of(cancelled), "cancel reports the job cancelled", text_of(cancelled))
    check(wait_until(lambda: not pids_running(sleeper), 5), "the cancelled job's tree is gone", pids_running(sleeper))

    unknown = await session.call_tool("job", {"poll": ["bg_999"]})
    check(unknown.is_error, "polling an unknown job is an error", unknown)
    check("bg_999: not found" in text_of(unknown), "the unknown job is named", text_of(unknown))


async def eval_checks(session: ClientSession) -> None:
    """A Python session keeps its state between calls."""
    first = await session.call_tool("eval", {"cells": [{"language": "py", "code": "x = 20"}]})
    check(not first.is_error, "an eval cell runs", first)
    second = await session.call_tool("eval", {"cells": [{"language": "py", "code": "x + 22"}]})
    check("42" in text_of(second), "the kernel kept x between calls", text_of(second))


def rpc(process: subprocess.Popen, message: dict) -> None:
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def read_until(process: subprocess.Popen, request_id: int) -> list[dict]:
    """Every message up to and including the response to `request_id`."""
    messages = []
    while True:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(f"server closed stdout before answering request {request_id}")
        messages.append(json.loads(line))
        if messages[-1].get("id") == request_id:
            return messages


def read_response(process: subprocess.Popen, request_id: int) -> dict:
    return read_until(process, request_id)[-1]


def start_raw_server(execkit: str) -> subprocess.Popen:
    """A server spoken to in raw JSON-RPC, so the test controls exactly when stdin closes."""
    process = subprocess.Popen(
        [execkit, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, **server_env()},
    )
    rpc(process, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp_smoke", "version": "0"},
        },
    })
    read_response(process, 1)
    rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def start_sleep(process: subprocess.Popen, request_id: int = 2) -> str:
    sleeper = unique_sleep()
    rpc(process, {
        "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": sleeper}},
    })
    check(wait_until(lambda: pids_running(sleeper), 10), "the sleep started", sleeper)
    return sleeper


def stop(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()


def protocol_checks(execkit: str) -> None:
    """What the client library hides: progress only with a token, no response once cancelled."""
    process = start_raw_server(execkit)
    slow = "for i in 1 2 3; do echo $i; sleep 0.3; done"
    rpc(process, {
        "jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": slow}},
    })
    messages = read_until(process, 10)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    check(not progress, "no progress notifications without a progress token", progress)
    check(messages[-1]["result"]["isError"] is False, "the untracked slow call succeeds", messages[-1])

    rpc(process, {
        "jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": slow}, "_meta": {"progressToken": "tok-11"}},
    })
    messages = read_until(process, 11)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    check(len(progress) >= 1, "progress notifications with a progress token", messages)
    check(all(m["params"]["progressToken"] == "tok-11" for m in progress), "progress carries the token", progress)
    check(all(m["params"]["total"] == 300_000 for m in progress), "progress total is the timeout in ms", progress)

    sleeper = start_sleep(process, request_id=12)
    rpc(process, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12}})
    gone = wait_until(lambda: not pids_running(sleeper), 5)
    check(gone, "a raw notifications/cancelled killed the sleep", pids_running(sleeper))
    rpc(process, {"jsonrpc": "2.0", "id": 13, "method": "ping"})
    messages = read_until(process, 13)
    check(all(m.get("id") != 12 for m in messages), "a cancelled request gets no response", messages)
    stop(process)


def shutdown_checks(execkit: str) -> None:
    # stdin EOF: the server closes at once, killing the call in flight.
    process = start_raw_server(execkit)
    sleeper = start_sleep(process)
    started = time.monotonic()
    process.stdin.close()
    try:
        code = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("the server did not exit within 10 s of stdin EOF")
    elapsed = time.monotonic() - started
    check(code == 0, "the server exits 0 on stdin EOF", code)
    # The Python client's stdio transport waits 2 s after closing stdin before it kills.
    check(elapsed < 2.0, "the server exits within 2 s of stdin EOF", f"{elapsed:.2f} s")
    check(not pids_running(sleeper), "stdin EOF left no sleep behind", pids_running(sleeper))
    process.stdout.close()

    # stdin EOF with a background job running: the job's tree goes too.
    process = start_raw_server(execkit)
    sleeper = unique_sleep()
    rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "bash", "arguments": {"command": sleeper, "async": True}}})
    read_response(process, 2)
    check(wait_until(lambda: pids_running(sleeper), 10), "the background job started", sleeper)
    process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("the server did not exit within 10 s of stdin EOF with a job running")
    check(wait_until(lambda: not pids_running(sleeper), 3), "stdin EOF killed the background job", pids_running(sleeper))
    process.stdout.close()

    # SIGTERM, SIGINT, SIGHUP: the same, while stdin stays open.
    for signo in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        name = signal.Signals(signo).name
        process = start_raw_server(execkit)
        sleeper = start_sleep(process)
        process.send_signal(signo)
        try:
            code = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError(f"the server did not exit within 10 s of {name}")
        check(code == 0, f"the server exits 0 on {name}", code)
        check(not pids_running(sleeper), f"{name} left no sleep behind", pids_running(sleeper))
        process.stdin.close()
        process.stdout.close()


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} <path-to-execkit>")
    execkit = sys.argv[1]
    anyio.run(session_checks, execkit)
    protocol_checks(execkit)
    shutdown_checks(execkit)
    print("ALL OK", flush=True)


if __name__ == "__main__":
    main()
