//! Integration tests: the `execkit` binary — `call`, `bash`, `tools`, `artifact`, and the MCP
//! server driven by the official Python MCP client (tests/mcp_client/mcp_smoke.py).
//!
//! Every run gets its own HOME and EXECKIT_ARTIFACT_DIR, so nothing touches ~/.execkit.
#![allow(clippy::disallowed_methods)] // these tests start the binary with std::process::Command
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// The `execkit` binary: `CARGO_BIN_EXE_execkit` when set, else the one beside this test
/// binary's directory (`target/<profile>/deps/all-…` → `target/<profile>/execkit`).
pub(crate) fn execkit_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_BIN_EXE_execkit") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary has a path");
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("test binary lives in target/<profile>/deps");
    let bin = profile_dir.join("execkit");
    assert!(
        bin.is_file(),
        "the execkit binary is missing at {}; build it first with `cargo build -p execkit-cli` \
         (or set CARGO_BIN_EXE_execkit)",
        bin.display()
    );
    bin
}

/// A private HOME and artifact directory for one test.
pub(crate) struct Sandbox {
    pub(crate) home: TempDir,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        Sandbox { home: tempfile::tempdir().expect("temp dir") }
    }

    pub(crate) fn artifact_dir(&self) -> PathBuf {
        self.home.path().join("artifacts")
    }

    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env("HOME", self.home.path())
            .env("EXECKIT_ARTIFACT_DIR", self.artifact_dir())
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        command
    }

    pub(crate) fn execkit(&self, args: &[&str]) -> Output {
        self.command(execkit_bin()).args(args).output().expect("execkit runs")
    }

    fn execkit_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write as _;
        let mut child = self
            .command(execkit_bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("execkit starts");
        child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
        child.wait_with_output().expect("execkit runs")
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn assert_status(output: &Output, code: i32) {
    assert_eq!(output.status.code(), Some(code), "{}", describe(output));
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", describe(output)))
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .expect("content is an array")
        .iter()
        .filter(|block| block["type"] == "text")
        .map(|block| block["text"].as_str().expect("text block"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn call_prints_the_tool_result_and_exits_0() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["call", "bash", r#"{"command":"echo hi"}"#]);
    assert_status(&output, 0);
    let result = json(&output);
    assert_eq!(result["isError"], false);
    assert_eq!(text(&result), "hi");
    assert_eq!(result["structuredContent"]["exit_code"], 0);
}

#[test]
fn call_exits_1_when_the_result_is_an_error() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["call", "bash", r#"{"command":"exit 3"}"#]);
    assert_status(&output, 1);
    let result = json(&output);
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["exit_code"], 3);
    assert!(text(&result).contains("Command exited with code 3"), "{}", describe(&output));
}

#[test]
fn call_with_bad_json_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["call", "bash", "{command: echo}"]);
    assert_status(&output, 2);
    assert!(output.stdout.is_empty(), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not valid JSON"),
        "{}",
        describe(&output)
    );

    let output = sandbox.execkit(&["call", "bash"]);
    assert_status(&output, 2);
}

#[test]
fn call_of_an_unknown_tool_is_an_error_result() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["call", "no_such_tool", "{}"]);
    assert_status(&output, 1);
    let result = json(&output);
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("no_such_tool"), "{}", describe(&output));
}

#[test]
fn call_reads_arguments_from_stdin() {
    let sandbox = Sandbox::new();
    let output =
        sandbox.execkit_with_stdin(&["call", "bash", "-"], r#"{"command": "echo from stdin"}"#);
    assert_status(&output, 0);
    assert_eq!(text(&json(&output)), "from stdin");
}

#[test]
fn bash_prints_text_and_passes_the_exit_code_through() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["bash", "echo", "hi"]);
    assert_status(&output, 0);
    assert_eq!(stdout(&output), "hi\n");

    let output = sandbox.execkit(&["bash", "echo out; exit 3"]);
    assert_status(&output, 3);
    let printed = stdout(&output);
    assert!(printed.starts_with("out\n"), "{}", describe(&output));
    assert!(printed.contains("Command exited with code 3"), "{}", describe(&output));

    let output = sandbox.execkit(&["bash", "sleep 5", "--timeout", "1"]);
    assert_status(&output, 1);
    assert!(stdout(&output).contains("timed out after 1 second"), "{}", describe(&output));
}

#[test]
fn bash_async_prints_the_job_then_waits_for_it() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["bash", "--async", "echo start; sleep 1; echo end; exit 4"]);
    assert_status(&output, 4);
    let printed = stdout(&output);
    assert!(printed.starts_with("Started background job bg_1"), "{}", describe(&output));
    assert!(printed.contains("artifact://"), "{}", describe(&output));
    let end =
        printed.find("\nend\n").unwrap_or_else(|| panic!("no job output: {}", describe(&output)));
    assert!(printed[end..].contains("Command exited with code 4"), "{}", describe(&output));
}

#[test]
fn sigint_cancels_a_bash_call_and_kills_its_tree() {
    let sandbox = Sandbox::new();
    // A command line no other process has, to find the sleep in /proc.
    let sleeper = format!("sleep 100.{}", std::process::id());
    let child = sandbox
        .command(execkit_bin())
        .args(["bash", &sleeper])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("execkit starts");
    assert!(wait_for(|| !pids_with_cmdline(&sleeper).is_empty()), "the sleep never started");
    let kill =
        Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let output = child.wait_with_output().expect("execkit runs");
    assert_status(&output, 130);
    assert!(stdout(&output).contains("[Command cancelled]"), "{}", describe(&output));
    assert!(pids_with_cmdline(&sleeper).is_empty(), "the sleep survived SIGINT");
}

/// Polls for up to 10 s.
fn wait_for(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    condition()
}

/// Live (non-zombie) processes whose argv joined with spaces is `cmdline`.
fn pids_with_cmdline(cmdline: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let joined = argv.strip_suffix(b"\0").unwrap_or(&argv).split(|&b| b == 0);
            let joined: Vec<String> =
                joined.map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
            joined.join(" ") == cmdline && !zombie
        })
        .collect()
}

#[test]
fn bash_runs_in_the_global_cwd() {
    let sandbox = Sandbox::new();
    let dir = sandbox.home.path().join("work");
    std::fs::create_dir(&dir).expect("mkdir");
    let output = sandbox.execkit(&["--cwd", dir.to_str().expect("utf-8 path"), "bash", "pwd"]);
    assert_status(&output, 0);
    let expected = dir.canonicalize().expect("canonical");
    assert_eq!(stdout(&output).trim_end(), expected.to_str().expect("utf-8 path"));
}

#[test]
fn tools_in_every_format() {
    let sandbox = Sandbox::new();

    let output = sandbox.execkit(&["tools", "--format", "openai"]);
    assert_status(&output, 0);
    let tools = json(&output);
    let tools = tools.as_array().expect("a list");
    let names: Vec<&str> =
        tools.iter().map(|t| t["function"]["name"].as_str().expect("name")).collect();
    assert!(names.contains(&"bash") && names.contains(&"job"), "{names:?}");
    for tool in tools {
        assert_eq!(tool["type"], "function");
        assert!(tool["function"]["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(tool["function"]["parameters"]["type"], "object", "{tool}");
    }
    let bash = tools.iter().find(|t| t["function"]["name"] == "bash").expect("bash");
    assert!(bash["function"]["parameters"]["properties"]["command"].is_object(), "{bash}");

    let output = sandbox.execkit(&["tools", "--format", "anthropic"]);
    assert_status(&output, 0);
    for tool in json(&output).as_array().expect("a list") {
        assert_eq!(tool["input_schema"]["type"], "object", "{tool}");
        assert!(tool["name"].is_string());
    }

    let output = sandbox.execkit(&["tools", "--format", "gemini"]);
    assert_status(&output, 0);
    for tool in json(&output).as_array().expect("a list") {
        assert_eq!(tool["parameters"]["type"], "object", "{tool}");
        assert!(tool["name"].is_string() && tool["description"].is_string(), "{tool}");
    }

    let output = sandbox.execkit(&["tools"]);
    assert_status(&output, 0);
    for tool in json(&output).as_array().expect("a list") {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }

    let output = sandbox.execkit(&["tools", "--format", "xml"]);
    assert_status(&output, 2);
}

/// Calls `check` on every schema node under `schema` (property schemas, items, anyOf
/// branches, a schema-valued additionalProperties), with its path.
fn walk_schema(
    schema: &Value,
    path: &str,
    check: &mut dyn FnMut(&str, &serde_json::Map<String, Value>),
) {
    let Some(node) = schema.as_object() else {
        check(path, &serde_json::Map::new());
        return;
    };
    check(path, node);
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            walk_schema(property, &format!("{path}.{name}"), check);
        }
    }
    if let Some(items) = node.get("items") {
        walk_schema(items, &format!("{path}[]"), check);
    }
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        for (n, branch) in branches.iter().enumerate() {
            walk_schema(branch, &format!("{path}|{n}"), check);
        }
    }
    if let Some(extra) = node.get("additionalProperties").filter(|a| a.is_object()) {
        walk_schema(extra, &format!("{path}{{*}}"), check);
    }
}

fn is_object(node: &serde_json::Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    }
}

/// OpenAI strict mode (Structured Outputs, "Supported schemas"): every object sets
/// `additionalProperties: false` and lists every property in `required` (optional ones are
/// nullable instead); no `$ref`/`$defs` here (we inline), and only the documented keywords and
/// string formats.
fn openai_strict_violations(schema: &Value) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "type",
        "description",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "pattern",
        "format",
        "minItems",
        "maxItems",
    ];
    const FORMATS: &[&str] =
        &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
    let mut violations = Vec::new();
    walk_schema(schema, "$", &mut |path, node| {
        for key in node.keys().filter(|k| !KEYWORDS.contains(&k.as_str())) {
            violations.push(format!("{path}: keyword {key} is not supported"));
        }
        if let Some(format) = node.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&format)
        {
            violations.push(format!("{path}: format {format}"));
        }
        if node.get("type").is_none() && node.get("anyOf").is_none() && node.get("enum").is_none() {
            violations.push(format!("{path}: no type"));
        }
        if is_object(node) {
            if node.get("additionalProperties") != Some(&Value::Bool(false)) {
                violations.push(format!("{path}: additionalProperties is not false"));
            }
            let properties = node.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in properties.into_iter().flat_map(|p| p.keys()) {
                if !required.contains(&name.as_str()) {
                    violations.push(format!("{path}.{name}: not in required"));
                }
            }
        }
    });
    violations
}

/// Gemini function declarations (a subset of the OpenAPI 3.0 schema object): one `type` per
/// schema, no `$ref`/`$defs`/`additionalProperties`/`anyOf` unions of null, objects with
/// properties, `required` naming existing properties, formats only those Gemini knows.
fn gemini_violations(schema: &Value) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
    ];
    const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object"];
    const FORMATS: &[&str] = &["float", "double", "int32", "int64", "enum", "date-time"];
    let mut violations = Vec::new();
    walk_schema(schema, "$", &mut |path, node| {
        for key in node.keys().filter(|k| !KEYWORDS.contains(&k.as_str())) {
            violations.push(format!("{path}: keyword {key} is not supported"));
        }
        match node.get("type").and_then(Value::as_str) {
            Some(t) if TYPES.contains(&t) => {}
            _ => violations
                .push(format!("{path}: type must be one of {TYPES:?}: {:?}", node.get("type"))),
        }
        if let Some(format) = node.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&format)
        {
            violations.push(format!("{path}: format {format}"));
        }
        if node.get("type").is_some_and(|t| t == "object") {
            let properties = node.get("properties").and_then(Value::as_object);
            if properties.is_none_or(|p| p.is_empty()) {
                violations.push(format!("{path}: an object needs properties"));
            }
            for name in node.get("required").and_then(Value::as_array).into_iter().flatten() {
                let known =
                    name.as_str().is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)));
                if !known {
                    violations.push(format!("{path}: required {name} is not a property"));
                }
            }
        }
        if node
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().any(|v| !v.is_string()))
        {
            violations.push(format!("{path}: enum values must be strings"));
        }
    });
    violations
}

#[test]
fn openai_tools_claim_strict_only_when_they_meet_strict_mode() {
    let output = Sandbox::new().execkit(&["tools", "--format", "openai"]);
    assert_status(&output, 0);
    for tool in json(&output).as_array().expect("a list") {
        let function = &tool["function"];
        let name = function["name"].as_str().expect("name");
        let violations = openai_strict_violations(&function["parameters"]);
        match function["strict"].as_bool() {
            Some(true) => assert!(violations.is_empty(), "{name} claims strict: {violations:#?}"),
            Some(false) => assert!(!violations.is_empty(), "{name} could be strict: {function}"),
            None => panic!("{name} has no boolean strict: {function}"),
        }
        // bash `env`, debug `env` and debug `arguments` are free-form maps.
        let expected = !["bash", "debug"].contains(&name);
        assert_eq!(function["strict"], expected, "{name}: {function}");
        walk_schema(&function["parameters"], "$", &mut |path, node| {
            assert!(!node.contains_key("$ref") && !node.contains_key("$defs"), "{name} {path}");
            let format = node.get("format").and_then(Value::as_str).unwrap_or_default();
            assert!(!["uint64", "double", "uint32", "int64"].contains(&format), "{name} {path}");
        });
    }
}

#[test]
fn gemini_declarations_meet_gemini_schema_rules() {
    let output = Sandbox::new().execkit(&["tools", "--format", "gemini"]);
    assert_status(&output, 0);
    let tools = json(&output);
    for tool in tools.as_array().expect("a list") {
        let name = tool["name"].as_str().expect("name");
        let violations = gemini_violations(&tool["parameters"]);
        assert!(violations.is_empty(), "{name}: {violations:#?}");
    }
    let bash = tools.as_array().unwrap().iter().find(|t| t["name"] == "bash").expect("bash");
    assert!(bash["parameters"]["properties"]["command"].is_object(), "{bash}");
    assert_eq!(bash["parameters"]["required"], serde_json::json!(["command"]), "{bash}");
}

#[test]
fn eval_schema_requires_cells_offers_no_javascript_and_has_no_internal_notes() {
    let output = Sandbox::new().execkit(&["tools"]);
    assert_status(&output, 0);
    let tools = json(&output);
    for tool in tools.as_array().expect("a list") {
        walk_schema(&tool["inputSchema"], "$", &mut |path, node| {
            let description = node.get("description").and_then(Value::as_str).unwrap_or_default();
            let note = description.split(|c: char| !c.is_ascii_alphanumeric()).find(|w| {
                w.len() > 1
                    && w.starts_with(['B', 'E', 'J', 'O'])
                    && w[1..].bytes().all(|b| b.is_ascii_digit())
            });
            assert!(note.is_none(), "{} {path}: internal note in {description:?}", tool["name"]);
        });
    }
    let eval = tools.as_array().unwrap().iter().find(|t| t["name"] == "eval").expect("eval");
    let schema = &eval["inputSchema"];
    assert_eq!(schema["required"], serde_json::json!(["cells"]), "{schema}");
    assert_eq!(schema["properties"]["cells"]["type"], "array", "{schema}");
    let language = &schema["properties"]["cells"]["items"]["properties"]["language"];
    assert_eq!(language["enum"], serde_json::json!(["py", "js"]), "{schema}");
    assert!(!schema.to_string().contains("javascript"), "{schema}");
}

/// Runs `seq 1 300000` through bash and returns the artifact id its result cites.
fn seq_artifact(sandbox: &Sandbox) -> String {
    let output = sandbox.execkit(&["call", "bash", r#"{"command":"seq 1 300000"}"#]);
    assert_status(&output, 0);
    let result = json(&output);
    let text = text(&result);
    let start = text
        .find("artifact://")
        .unwrap_or_else(|| panic!("no artifact cited: {}", describe(&output)));
    let id = &text[start + "artifact://".len()..][..8];
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "bad id {id:?}");
    id.to_owned()
}

fn first_lines(output: &Output, n: usize) -> Vec<String> {
    stdout(output).lines().take(n).map(str::to_owned).collect()
}

#[test]
fn artifact_selectors_read_a_real_bash_artifact() {
    let sandbox = Sandbox::new();
    let id = seq_artifact(&sandbox);
    let uri = format!("artifact://{id}");

    let output = sandbox.execkit(&["artifact", &id]);
    assert_status(&output, 0);
    let whole = stdout(&output);
    assert!(whole.starts_with("1\n2\n3\n"), "{}", describe(&output));
    assert!(whole.contains("\n300000\n"), "{}", &whole[whole.len().saturating_sub(300)..]);
    assert!(whole.len() < 1_000_000, "the default read is a window, not {} bytes", whole.len());

    let output = sandbox.execkit(&["artifact", &id, "--lines", "10-12"]);
    assert_status(&output, 0);
    assert_eq!(first_lines(&output, 3), ["10", "11", "12"]);
    assert!(!stdout(&output).lines().any(|l| l == "13" || l == "9"), "{}", describe(&output));

    let output = sandbox.execkit(&["artifact", &uri, "--head", "3"]);
    assert_status(&output, 0);
    assert_eq!(first_lines(&output, 3), ["1", "2", "3"]);
    assert!(!stdout(&output).lines().any(|l| l == "4"), "{}", describe(&output));

    let output = sandbox.execkit(&["artifact", &id, "--tail", "2"]);
    assert_status(&output, 0);
    assert_eq!(first_lines(&output, 2), ["299999", "300000"]);

    let output = sandbox.execkit(&["artifact", &id, "--grep", "^12345$"]);
    assert_status(&output, 0);
    assert!(stdout(&output).lines().any(|l| l == "12345:12345"), "{}", describe(&output));

    let output = sandbox.execkit(&["artifact", &id, "--grep", "^12345$", "-C", "1"]);
    assert_status(&output, 0);
    let lines: Vec<String> = stdout(&output).lines().map(str::to_owned).collect();
    for expected in ["12344-12344", "12345:12345", "12346-12346"] {
        assert!(lines.iter().any(|l| l == expected), "{expected} missing: {}", describe(&output));
    }

    let output = sandbox.execkit(&["artifact", &id, "--grep", "^1234[0-9]$", "--max", "2"]);
    assert_status(&output, 0);
    let matches =
        stdout(&output).lines().filter(|l| l.starts_with("1234") && l.contains(':')).count();
    assert_eq!(matches, 2, "{}", describe(&output));

    let output = sandbox.execkit(&["artifact", &format!("{uri}?lines=5-6")]);
    assert_status(&output, 0);
    assert_eq!(first_lines(&output, 2), ["5", "6"]);

    let output = sandbox.execkit(&["artifact", &id, "--raw"]);
    assert_status(&output, 0);
    let expected: String = (1..=300_000).map(|n| format!("{n}\n")).collect();
    assert!(output.stdout == expected.as_bytes(), "--raw differs ({} bytes)", output.stdout.len());

    let output = sandbox.execkit(&["artifact", "--list"]);
    assert_status(&output, 0);
    assert!(
        stdout(&output).lines().any(|l| l.starts_with(&id) && l.contains("seq 1 300000")),
        "{}",
        describe(&output)
    );

    let output = sandbox.execkit(&["artifact", "--gc"]);
    assert_status(&output, 0);
    let output = sandbox.execkit(&["artifact", &id, "--head", "1"]);
    assert_status(&output, 0);
}

#[test]
fn artifact_not_found_and_usage_errors() {
    let sandbox = Sandbox::new();
    let id = seq_artifact(&sandbox);
    let missing = if id == "00000000" { "00000001" } else { "00000000" };

    let output = sandbox.execkit(&["artifact", missing]);
    assert_status(&output, 1);
    assert!(String::from_utf8_lossy(&output.stderr).contains("not found"), "{}", describe(&output));
    let output = sandbox.execkit(&["artifact", missing, "--raw"]);
    assert_status(&output, 1);

    let usage: [&[&str]; 8] = [
        &["artifact", "not-an-id"],
        &["artifact", "artifact://../../etc/passwd"],
        &["artifact"],
        &["artifact", &id, "--head", "1", "--tail", "1"],
        &["artifact", &id, "--raw", "--lines", "1-2"],
        &["artifact", &id, "--grep", "("],
        &["artifact", &id, "--lines", "banana"],
        &["artifact", &id, "--grep", "x", "-C", "99"],
    ];
    for args in usage {
        let output = sandbox.execkit(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", describe(&output));
    }
}

#[test]
fn doctor_prints_sections() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["doctor"]);
    assert_status(&output, 0);
    assert!(!stdout(&output).trim().is_empty(), "{}", describe(&output));
}

#[test]
fn version_and_help() {
    let sandbox = Sandbox::new();
    let output = sandbox.execkit(&["--version"]);
    assert_status(&output, 0);
    assert!(stdout(&output).starts_with("execkit "), "{}", describe(&output));
    for sub in ["mcp", "call", "bash", "tools", "artifact", "doctor"] {
        let output = sandbox.execkit(&[sub, "--help"]);
        assert_status(&output, 0);
        assert!(stdout(&output).contains("Usage: execkit"), "{sub}: {}", describe(&output));
    }
}

/// The MCP server end to end with the official Python client; see the script's docstring.
#[test]
fn mcp_server_with_the_python_mcp_client() {
    let sandbox = Sandbox::new();
    let probe = sandbox.command("python3").args(["-c", "import mcp"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        println!("SKIPPED mcp_server_with_the_python_mcp_client (python mcp package missing)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp_client/mcp_smoke.py");
    let output =
        sandbox.command("python3").arg(&script).arg(execkit_bin()).output().expect("python3 runs");
    assert_status(&output, 0);
    let printed = stdout(&output);
    for check in [
        "ok tools/list has bash and job",
        "ok bash schema has command",
        "ok echo hello text",
        "ok progress notifications arrived",
        "ok ?lines=1-5 gives lines 1-5",
        "ok a missing artifact is a not-found error",
        "ok the blob is the exact bytes",
        "ok it names the CLI instead",
        "ok resources/list has the artifact",
        "ok notifications/cancelled killed the sleep",
        "ok no progress notifications without a progress token",
        "ok progress notifications with a progress token",
        "ok a cancelled request gets no response",
        "ok the server exits within 2 s of stdin EOF",
        "ok stdin EOF left no sleep behind",
        "ok SIGTERM left no sleep behind",
        "ok SIGINT left no sleep behind",
        "ok SIGHUP left no sleep behind",
        "ALL OK",
    ] {
        assert!(printed.contains(check), "missing `{check}`: {}", describe(&output));
    }
}
