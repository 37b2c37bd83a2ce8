//! `flotilla-lane-shim`: the lane shim ([`shim`]) as a small program of its
//! own, which the daemon starts for every lane turn when it is installed
//! next to `flotilla` (`cargo install` installs both). The whole `flotilla`
//! program can do the same (`flotilla lane-shim`), but starting a program of
//! its size costs more than the rest of what the shim does. Reads only its
//! arguments; the daemon writes them.
//!
//! Usage: `flotilla-lane-shim [--gated] [--stdin-prompt] --dir DIR -- COMMAND...`

mod shim;
mod shim_reaper;

use std::ffi::OsString;
use std::process::ExitCode;

use shim::ShimArgs;

fn parse(mut words: impl Iterator<Item = OsString>) -> Result<ShimArgs, String> {
    let (mut dir, mut stdin_prompt, mut gated) = (None, false, false);
    while let Some(word) = words.next() {
        match word.to_str() {
            Some("--gated") => gated = true,
            Some("--stdin-prompt") => stdin_prompt = true,
            Some("--dir") => dir = Some(words.next().ok_or("--dir needs a directory")?),
            Some("--") => break,
            _ => return Err(format!("unexpected argument {}", word.to_string_lossy())),
        }
    }
    let argv = words
        .map(|w| {
            w.into_string().map_err(|w| {
                format!(
                    "the command's argument {} is not UTF-8",
                    w.to_string_lossy()
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if argv.is_empty() {
        return Err("a command is needed after --".into());
    }
    Ok(ShimArgs {
        dir: dir.ok_or("--dir DIR is needed")?.into(),
        stdin_prompt,
        gated,
        argv,
    })
}

fn main() -> ExitCode {
    match parse(std::env::args_os().skip(1)) {
        Ok(args) => shim::main(&args),
        Err(e) => {
            eprintln!(
                "flotilla-lane-shim: {e}; it is started by the flotilla daemon, not by people"
            );
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> impl Iterator<Item = OsString> {
        s.split(' ')
            .map(OsString::from)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn the_daemons_arguments_are_read() {
        let a = parse(words("--gated --dir /t --stdin-prompt -- sh -c true")).expect("parsed");
        assert!(a.gated && a.stdin_prompt);
        assert_eq!(a.dir, std::path::PathBuf::from("/t"));
        assert_eq!(a.argv, ["sh", "-c", "true"]);
    }

    #[test]
    fn a_missing_dir_or_command_or_an_unknown_flag_is_refused() {
        assert!(parse(words("-- true")).is_err());
        assert!(parse(words("--dir /t --")).is_err());
        assert!(parse(words("--dir /t --bogus -- true")).is_err());
        assert!(parse(words("--dir")).is_err());
    }
}
