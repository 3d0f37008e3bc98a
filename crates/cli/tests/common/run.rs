//! The `parlance` binary run once, as a user runs it from a shell.

use std::io::Write;
use std::process::{Command, Stdio};

/// `parlance ARGS` with `stdin` as its standard input: the exit code (-1
/// when killed by a signal), standard output and standard error.
pub fn parlance(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(args);
    output(cmd, stdin)
}

/// Runs `cmd` with `stdin` as its standard input (written from a thread of
/// its own, so that a large input cannot block against a full output pipe)
/// and returns what [`parlance`] returns.
pub fn output(mut cmd: Command, stdin: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("parlance starts");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(data.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
