"""Tool definitions: valid JSON Schema, the shapes the official SDKs' request types expect, and
OpenAI's strict rules wherever a tool claims `strict`. Types only: no network call."""

import typing

import anthropic.types
import jsonschema
import openai.types.chat
import pydantic
import pytest

import execkit

#: OpenAI strict mode (Structured Outputs, "Supported schemas"): the keywords and string
#: formats it accepts; every object closed and listing every property as required.
STRICT_KEYWORDS = {
    "type", "description", "enum", "const", "properties", "required", "additionalProperties",
    "items", "anyOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "pattern", "format", "minItems", "maxItems",
}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6",
                  "uuid"}


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    with execkit.Toolkit(tmp_path_factory.mktemp("schemas")) as tk:
        yield tk


def schema_nodes(schema, path="$"):
    """Every schema node with its path: properties, items, anyOf branches, additionalProperties."""
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from schema_nodes(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from schema_nodes(schema["items"], f"{path}[]")
    for n, branch in enumerate(schema.get("anyOf", [])):
        yield from schema_nodes(branch, f"{path}|{n}")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from schema_nodes(schema["additionalProperties"], f"{path}{{*}}")


def is_object(node):
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def strict_violations(schema):
    violations = []
    for path, node in schema_nodes(schema):
        violations += [f"{path}: keyword {k}" for k in node if k not in STRICT_KEYWORDS]
        if "format" in node and node["format"] not in STRICT_FORMATS:
            violations.append(f"{path}: format {node['format']}")
        if not ({"type", "anyOf", "enum"} & node.keys()):
            violations.append(f"{path}: no type")
        if is_object(node):
            if node.get("additionalProperties") is not False:
                violations.append(f"{path}: additionalProperties is not false")
            missing = set(node.get("properties", {})) - set(node.get("required", []))
            violations += [f"{path}.{name}: not required" for name in sorted(missing)]
    return violations


def check_typed_dict(kind, value):
    """`value` validates as the SDK's TypedDict and has no key the type does not declare."""
    pydantic.TypeAdapter(kind).validate_python(value)
    declared = set(typing.get_type_hints(kind))
    assert set(value) <= declared, (set(value) - declared, kind)


def test_every_tool_is_listed_in_every_format(toolkit):
    names = [t["name"] for t in toolkit.tools()]
    assert {"bash", "eval", "job"} <= set(names), names
    for fmt in execkit.FORMATS:
        assert len(toolkit.tools(format=fmt)) == len(names), fmt


def test_input_schemas_are_valid_json_schema(toolkit):
    for tool in toolkit.tools(format="mcp"):
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["inputSchema"]["type"] == "object", tool["name"]
    for tool in toolkit.tools(format="openai"):
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    for tool in toolkit.tools(format="anthropic"):
        jsonschema.Draft202012Validator.check_schema(tool["input_schema"])


def test_openai_definitions_have_the_sdk_request_shape(toolkit):
    for tool in toolkit.tools(format="openai"):
        check_typed_dict(openai.types.chat.ChatCompletionToolParam, tool)
        check_typed_dict(openai.types.shared_params.FunctionDefinition, tool["function"])


def test_anthropic_definitions_have_the_sdk_request_shape(toolkit):
    for tool in toolkit.tools(format="anthropic"):
        check_typed_dict(anthropic.types.ToolParam, tool)
        assert tool["input_schema"]["type"] == "object"


def test_gemini_declarations_have_name_description_parameters(toolkit):
    for tool in toolkit.tools(format="gemini"):
        assert set(tool) == {"name", "description", "parameters"}, tool


def test_tools_marked_strict_meet_openai_strict_rules(toolkit):
    strict = [t["function"] for t in toolkit.tools(format="openai") if t["function"]["strict"]]
    assert strict, "no tool is strict-capable"
    for function in strict:
        assert strict_violations(function["parameters"]) == [], function["name"]


def test_an_unknown_format_is_a_value_error(toolkit):
    with pytest.raises(ValueError, match='unknown tool format "xml"; one of mcp, openai'):
        toolkit.tools(format="xml")
