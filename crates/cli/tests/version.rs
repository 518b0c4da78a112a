//! `promptloom --version` prints the line the app shows (its `--version` and `about`): the
//! workspace version, the commit and `-dirty` when built from uncommitted changes.

use std::process::Command;

#[test]
fn version_is_the_shared_version_line() {
    let output = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .arg("--version")
        .output()
        .expect("the promptloom binary runs");
    assert!(output.status.success());
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        printed.trim_end(),
        format!("promptloom {}", promptloom_version::VERSION_LINE)
    );
    assert!(printed.starts_with(&format!("promptloom {} (", env!("CARGO_PKG_VERSION"))));
}
