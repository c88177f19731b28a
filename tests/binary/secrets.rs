//! O47: nothing the scrub removed can be read back through execkit's own `/proc/<pid>/environ`;
//! O44: inherited exported functions and caller-supplied shell options cannot hijack a call.

use serde_json::json;

use super::{Home, text};

/// Values no other process has: finding one anywhere means it leaked.
const TOKEN: &str = "ghp_leakcheckAAAAAAAAAAAAAAAAAAAAAAAA1";
const PASSWORD: &str = "leakcheck-admin-password-7781";
const URL: &str = "redis://:leakcheck-redis-pw@localhost:6379";

fn secret_env() -> [(&'static str, &'static str); 3] {
    [("GITHUB_TOKEN", TOKEN), ("ADMIN_PW", PASSWORD), ("CACHE", URL)]
}

fn assert_no_secret(output: &str) {
    for secret in [TOKEN, PASSWORD, "leakcheck-redis-pw"] {
        assert!(!output.contains(secret), "secret {secret} leaked:\n{output}");
    }
}

#[test]
fn bash_reads_no_secret_from_its_parent() {
    let home = Home::new();
    let command = r#"tr '\0' '\n' </proc/$PPID/environ; echo "parent=$(cat /proc/$PPID/comm)""#;
    let output = home.call("bash", &json!({ "command": command }), &secret_env());
    let shown = text(&output);
    assert!(shown.contains("parent=execkit"), "{shown}");
    assert!(shown.contains("EXECKIT_BASH_SNAPSHOT=off"), "the environ was read:\n{shown}");
    assert_no_secret(&shown);
    for name in ["ADMIN_PW", "CACHE", "GITHUB_TOKEN"] {
        assert!(shown.contains(&format!("\"{name}\"")), "{name} not in scrubbed_env:\n{shown}");
    }
}

#[test]
fn a_setsid_grandchild_walking_up_its_ancestors_finds_no_secret() {
    let home = Home::new();
    let walk = r#"p=$$; n=0
while [ "$p" -gt 1 ]; do
  tr '\0' '\n' </proc/$p/environ 2>/dev/null; n=$((n+1))
  set -- $(sed 's/.*) //' /proc/$p/stat); p=$2
done
echo "walked=$n""#;
    let command = format!("setsid bash -c {} </dev/null | cat", shell_quote(walk));
    let output = home.call("bash", &json!({ "command": command }), &secret_env());
    let shown = text(&output);
    assert!(shown.contains("walked="), "{shown}");
    assert_no_secret(&shown);
}

#[test]
fn a_python_cell_reads_no_secret_from_its_parent() {
    let home = Home::new();
    let code = "import os\nraw = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n\
                print('read', len(raw))\nprint(raw.replace(b'\\0', b'\\n').decode('utf-8', 'replace'))";
    let args = json!({ "cells": [{ "language": "py", "code": code }] });
    let output = home.call("eval", &args, &secret_env());
    let shown = text(&output);
    assert!(shown.contains("read "), "{shown}");
    assert!(shown.contains("EXECKIT_BASH_SNAPSHOT=off"), "the environ was read:\n{shown}");
    assert_no_secret(&shown);
}

#[test]
fn an_inherited_exported_function_does_not_replace_ls() {
    let home = Home::new();
    let hijack = [("BASH_FUNC_ls%%", "() { echo HIJACKED; }")];
    let output = home.call("bash", &json!({ "command": "ls -d /" }), &hijack);
    let shown = text(&output);
    assert!(!shown.contains("HIJACKED"), "{shown}");
    assert!(shown.contains('/'), "{shown}");
}

#[test]
fn caller_xtrace_traces_the_command_but_not_the_prelude() {
    let home = Home::new();
    for env in [
        json!({ "SHELLOPTS": "xtrace" }),
        json!({ "SHELLOPTS": "xtrace:pipefail", "PS4": "+${BASH_SOURCE:-none} " }),
    ] {
        let args = json!({ "command": "cd /; echo traced-ok", "env": env });
        let output = home.call("bash", &args, &[]);
        let shown = text(&output);
        assert!(shown.contains("echo traced-ok"), "the command is traced:\n{shown}");
        for internal in ["__execkit", "bash-prelude", "bash-cwd", "set +xv"] {
            assert!(!shown.contains(internal), "{internal} shown for {env}:\n{shown}");
        }
    }
}

#[test]
fn caller_verbose_never_shows_the_run_directory() {
    let home = Home::new();
    let args = json!({ "command": "cd /; echo verbose-ok", "env": { "SHELLOPTS": "verbose" } });
    let output = home.call("bash", &args, &[]);
    let shown = text(&output);
    assert!(shown.contains("verbose-ok"), "the command ran:\n{shown}");
    for internal in ["bash-cwd", "bash-prelude", "/execkit"] {
        assert!(!shown.contains(internal), "{internal} shown:\n{shown}");
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
