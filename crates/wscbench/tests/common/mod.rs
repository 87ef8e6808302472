//! What the CLI's integration tests share: the project root and a `wscbench` command run from it.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::prelude::*;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn wscbench() -> Command {
    let mut cmd = Command::cargo_bin("wscbench").unwrap();
    cmd.current_dir(root());
    cmd
}
