"""The README's agent-loop examples run as written and build messages the SDKs accept."""

import re
import typing
from pathlib import Path

import anthropic.types
import openai.types.chat
import pydantic
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_examples() -> list:
    section = README.read_text().split("## Use it from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_has_an_openai_and_an_anthropic_example():
    examples = python_examples()
    assert len(examples) == 2, examples


@pytest.mark.parametrize("index", [0, 1])
def test_readme_agent_loops_build_valid_messages(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("x")
    namespace: dict = {}
    if index == 1:
        exec(python_examples()[0], namespace)  # noqa: S102 - the README's own code
    exec(python_examples()[index], namespace)  # noqa: S102
    messages = namespace["messages"]
    if index == 0:
        kind = openai.types.chat.ChatCompletionMessageParam
        assert messages[-1]["role"] == "tool" and messages[-1]["content"].strip() == "1"
    else:
        kind = anthropic.types.MessageParam
        result = messages[-1]["content"][0]
        assert result["is_error"] is False and "45" in result["content"][0]["text"]
    adapter = pydantic.TypeAdapter(typing.List[kind])  # noqa: UP006 - Python 3.9
    adapter.validate_python(messages)
