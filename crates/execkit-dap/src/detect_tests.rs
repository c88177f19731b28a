use std::path::Path;

use super::*;
use crate::adapters::builtin;

fn names(found: &[Candidate<'_>]) -> Vec<String> {
    found.iter().map(|c| c.def.name.clone()).collect()
}

fn detect(program: &Path, root: &Path) -> Result<Vec<String>, DetectError> {
    let (defs, _) = builtin();
    candidates(&defs, program, root).map(|found| names(&found))
}

#[test]
fn extension_picks_its_adapter() {
    let dir = tempfile::tempdir().unwrap();
    for (file, expected) in
        [("a.py", "debugpy"), ("B.GO", "dlv"), ("x.ts", "js-debug"), ("y.rb", "rdbg")]
    {
        let path = dir.path().join(file);
        std::fs::write(&path, "").unwrap();
        assert_eq!(detect(&path, dir.path()).unwrap()[0], expected, "{file}");
    }
}

#[test]
fn native_order_is_lldb_then_gdb_then_codelldb_unless_a_marker_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let c = src.join("main.c");
    std::fs::write(&c, "int main(){}").unwrap();
    assert_eq!(detect(&c, dir.path()).unwrap(), ["lldb-dap", "gdb", "codelldb"]);
    // build.zig in an ancestor up to the root: only lldb-dap and codelldb list it.
    std::fs::write(dir.path().join("build.zig"), "").unwrap();
    assert_eq!(detect(&c, dir.path()).unwrap(), ["lldb-dap", "codelldb", "gdb"]);
}

#[test]
fn markers_above_the_project_root_do_not_count() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("build.zig"), "").unwrap();
    let root = outer.path().join("proj");
    std::fs::create_dir(&root).unwrap();
    let c = root.join("main.c");
    std::fs::write(&c, "").unwrap();
    assert_eq!(detect(&c, &root).unwrap(), ["lldb-dap", "gdb", "codelldb"]);
}

#[test]
fn glob_root_markers_match() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("App.csproj"), "").unwrap();
    let cs = dir.path().join("Program.cs");
    std::fs::write(&cs, "").unwrap();
    let (defs, _) = builtin();
    let found = candidates(&defs, &cs, dir.path()).unwrap();
    assert_eq!((found[0].def.name.as_str(), found[0].root_marker), ("netcoredbg", true));
}

#[test]
fn shebang_scripts_go_to_their_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        ("#!/usr/bin/env python3\nprint(1)\n", "debugpy"),
        ("#!/usr/bin/python3.11 -u\n", "debugpy"),
        ("#!/usr/bin/env -S node --trace-warnings\n", "js-debug"),
        ("#!/usr/bin/ruby\n", "rdbg"),
    ] {
        let path = dir.path().join("tool");
        std::fs::write(&path, text).unwrap();
        assert_eq!(detect(&path, dir.path()).unwrap()[0], expected, "{text}");
    }
    let path = dir.path().join("tool");
    std::fs::write(&path, "#!/bin/sh\necho\n").unwrap();
    assert!(matches!(detect(&path, dir.path()), Err(DetectError::NoAdapter { .. })));
}

#[test]
fn go_build_info_puts_dlv_first_in_exec_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server");
    let mut bytes = b"\x7fELF\x02\x01\x01".to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 5000));
    bytes.extend(GO_BUILDINFO);
    std::fs::write(&path, &bytes).unwrap();
    let (defs, _) = builtin();
    let found = candidates(&defs, &path, dir.path()).unwrap();
    assert_eq!(names(&found), ["dlv", "lldb-dap", "gdb", "codelldb"]);
    assert!(found[0].go_binary && !found[1].go_binary);
    std::fs::write(&path, b"\x7fELF\x02\x01\x01").unwrap();
    assert_eq!(detect(&path, dir.path()).unwrap(), ["lldb-dap", "gdb", "codelldb"]);
}

#[test]
fn go_marker_split_across_scan_chunks_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let mut bytes = b"\x7fELF".to_vec();
    bytes.resize((1 << 20) - 5, 0);
    bytes.extend(GO_BUILDINFO);
    std::fs::write(&path, &bytes).unwrap();
    assert!(has_go_buildinfo(&path));
}

#[test]
fn directories_need_a_package_adapter_with_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let err = detect(dir.path(), dir.path()).unwrap_err();
    assert!(err.to_string().ends_with("/ is a directory; pass an executable or source file, or use an adapter that builds packages (dlv)."), "{err}");
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    assert_eq!(detect(dir.path(), dir.path()).unwrap(), ["dlv"]);
}

#[test]
fn missing_program_says_so_and_hints_at_args() {
    let dir = tempfile::tempdir().unwrap();
    let err = detect(&dir.path().join("app.py"), dir.path()).unwrap_err();
    assert_eq!(err.to_string(), format!("Program not found: {}/app.py", dir.path().display()));
    let err = detect(&dir.path().join("python app.py"), dir.path()).unwrap_err();
    assert!(
        err.to_string().ends_with(" (\"program\" is a path; put arguments in \"args\")"),
        "{err}"
    );
}

#[test]
fn unknown_extension_has_no_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "").unwrap();
    let err = detect(&path, dir.path()).unwrap_err();
    assert_eq!(err.to_string(), format!("No debug adapter handles {}.", path.display()));
}

#[test]
fn globs() {
    assert!(glob_match("python*", "python3.11"));
    assert!(glob_match("*.csproj", "App.csproj"));
    assert!(!glob_match("*.csproj", "App.fsproj"));
    assert!(glob_match("lldb-dap-*", "lldb-dap-19"));
    assert!(!glob_match("node", "nodejs"));
}
