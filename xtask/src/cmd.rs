//! Running external commands with their command line echoed.

use std::path::Path;
use std::process::Command;

/// Runs `program args` in `dir` (the current directory when `None`), with
/// extra environment, and fails with the command line when it fails.
pub fn run(
    dir: Option<&Path>,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(), String> {
    let line = format!("{program} {}", args.join(" "));
    eprintln!("==> {line}");
    let mut command = Command::new(program);
    command.args(args).envs(env.iter().copied());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run `{line}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{line}` failed ({status})"))
    }
}

/// Runs `program args` in `dir` and returns its standard output.
pub fn output(dir: &Path, program: &str, args: &[&str]) -> Result<String, String> {
    let line = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run `{line}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{line}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("`{line}` printed non-UTF-8: {e}"))
}
