"""The sandbox's escalation flow with the official MCP Python client.

Usage: mcp_elicit.py <path-to-execkit> <workspace> <outside-dir>

Starts `execkit mcp --sandbox workspace-write` in <workspace> (with a 2 s approval timeout)
and asks, through bash's `sandbox_permissions: "require_escalated"`, to write into
<outside-dir>, which is outside every writable root. The client's elicitation callback
approves once, approves for the session (the second identical call is not asked again),
declines, and stays silent; a second client without the elicitation capability is refused at
once. Prints one `ok <check>` line per check and `ALL OK` at the end.
"""

import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

ANSWERS: list[str] = []
ASKED: list[str] = []


def check(condition: bool, what: str, detail: object = "") -> None:
    if not condition:
        raise AssertionError(f"{what}: {detail}")
    print(f"ok {what}", flush=True)


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    ASKED.append(params.message)
    how = ANSWERS.pop(0)
    if how == "silent":
        await anyio.sleep(30)
    if how == "decline":
        return types.ElicitResult(action="decline")
    scope = "this command for this session" if how == "session" else "once"
    return types.ElicitResult(action="accept", content={"approve": True, "scope": scope})


def server(execkit: str, workspace: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("HOME", "EXECKIT_ARTIFACT_DIR", "PATH") if k in os.environ}
    env["EXECKIT_SANDBOX_APPROVAL_TIMEOUT_S"] = "2"
    args = ["--cwd", workspace, "mcp", "--sandbox", "workspace-write"]
    return StdioServerParameters(command=execkit, args=args, env=env)


def escalated(command: str) -> dict:
    return {
        "command": command,
        "sandbox_permissions": "require_escalated",
        "justification": "writes the build output outside the workspace",
    }


async def with_elicitation(execkit: str, workspace: str, outside: str) -> None:
    async with (
        stdio_client(server(execkit, workspace)) as (read, write),
        ClientSession(read, write, elicitation_callback=answer) as session,
    ):
        await session.initialize()
        once = os.path.join(outside, "once.txt")
        ANSWERS.append("once")
        result = await session.call_tool("bash", escalated(f"echo yes > {once} && cat {once}"))
        check(text_of(result) == "yes", "approved once runs outside the sandbox", text_of(result))
        check(ASKED[-1].startswith("Allow this command to run outside the sandbox? echo yes"), "the question names the command", ASKED[-1])
        check(ASKED[-1].endswith("reason given: writes the build output outside the workspace"), "the question gives the reason", ASKED[-1])
        check(result.structured_content["sandbox"]["escalated"] is True, "the result says it ran outside")

        session_file = os.path.join(outside, "session.txt")
        command = f"echo s >> {session_file}"
        ANSWERS.append("session")
        for _ in range(2):
            result = await session.call_tool("bash", escalated(command))
            check(not result.is_error, "approved for the session runs", text_of(result))
        check(len(ASKED) == 2, "a session approval is not asked again", ASKED)
        check(Path(session_file).read_text() == "s\ns\n", "both session calls ran")

        declined = os.path.join(outside, "declined.txt")
        ANSWERS.append("decline")
        result = await session.call_tool("bash", escalated(f"touch {declined}"))
        check(result.is_error and text_of(result) == "The person declined to run this command outside the sandbox.", "a decline runs nothing", text_of(result))

        ANSWERS.append("silent")
        result = await session.call_tool("bash", escalated(f"touch {declined}"))
        check(text_of(result) == "The person did not answer within 2 seconds.", "silence times out", text_of(result))
        check(not os.path.exists(declined), "neither the declined nor the unanswered call ran")


async def without_elicitation(execkit: str, workspace: str, outside: str) -> None:
    async with (
        stdio_client(server(execkit, workspace)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        target = os.path.join(outside, "no-channel.txt")
        result = await session.call_tool("bash", escalated(f"touch {target}"))
        expected = "This command asked to run outside the sandbox, but this client cannot ask a person for approval. Nothing was run."
        check(text_of(result) == expected, "a client without elicitation is refused", text_of(result))
        check(not os.path.exists(target), "nothing ran without a channel")
        result = await session.call_tool("bash", {"command": f"touch {target}"})
        check(result.structured_content["sandbox"]["denied"] is True, "the plain call is denied", text_of(result))


def main() -> None:
    execkit, workspace, outside = sys.argv[1:4]
    anyio.run(with_elicitation, execkit, workspace, outside)
    anyio.run(without_elicitation, execkit, workspace, outside)
    print("ALL OK", flush=True)


if __name__ == "__main__":
    main()
