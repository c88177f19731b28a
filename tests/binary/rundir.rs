//! O41a: a foreign or pre-created shared run directory parent never stops execkit.

use serde_json::json;

use super::{Home, text};

#[test]
fn a_file_where_the_run_directory_parent_goes_falls_back_to_a_private_one() {
    let home = Home::new();
    let runtime = home.path().join("runtime");
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    // `$XDG_RUNTIME_DIR/execkit` is the shared parent; a file there used to stop every start.
    std::fs::write(runtime.join("execkit"), "not a directory").unwrap();
    let env = [("XDG_RUNTIME_DIR", runtime.to_str().unwrap()), ("TMPDIR", tmp.to_str().unwrap())];
    let output = home.call("bash", &json!({ "command": "echo started-ok" }), &env);
    let shown = text(&output);
    assert!(output.status.success() && shown.contains("started-ok"), "{shown}");

    let mut command = home.command();
    command.arg("doctor");
    for (name, value) in env {
        command.env(name, value);
    }
    let doctor = text(&command.output().unwrap());
    let line = doctor.lines().find(|l| l.contains("run directory")).unwrap_or_default();
    assert!(line.contains(tmp.to_str().unwrap()), "{doctor}");
    assert!(line.contains("is not a directory"), "{doctor}");
    // Each run removes its private directory at close.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}
