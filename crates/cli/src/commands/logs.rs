//! `flotilla logs [--hub] [-n N] [-f]`: the daemon's (or the hub's) log
//! file, read directly (no daemon needed): its last lines, then, with
//! `--follow`, what is written after, across a rotation. JSON: one
//! `flotilla.logs.v1` object, or with `--follow` one `{"line": ...}` object
//! per line.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::Env;
use crate::args::LogsArgs;
use crate::exit::{CliError, NOT_FOUND, OK};
use crate::output::outln;

/// How often a followed log is checked for more.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

pub(crate) async fn run(env: &Env, a: LogsArgs) -> Result<u8> {
    let name = if a.hub { "hub.log" } else { "daemon.log" };
    let path = env.home.logs_dir.join(name);
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let what = if a.hub { "hub" } else { "daemon" };
            return Err(CliError {
                code: NOT_FOUND,
                message: format!(
                    "no log at {}: no {what} has run from this home",
                    path.display()
                ),
                hint: Some(format!(
                    "start it with `flotilla {}`, or name its home with --home",
                    if a.hub { "hub run" } else { "up" }
                )),
            }
            .into());
        }
        Err(e) => return Err(e.into()),
    };
    let lines = last_lines(&text, a.lines);
    if env.json && !a.follow {
        let out = json!({"schema": "flotilla.logs.v1", "file": path, "lines": lines});
        outln!("{out}")?;
        return Ok(OK);
    }
    for line in &lines {
        print_line(env.json, line)?;
    }
    if a.follow {
        follow(env.json, &path, text.len() as u64).await?;
    }
    Ok(OK)
}

/// The last `n` lines of `text` (all when `n` is 0).
fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let all: Vec<&str> = text.lines().collect();
    let skip = if n == 0 {
        0
    } else {
        all.len().saturating_sub(n)
    };
    all[skip..].to_vec()
}

/// Schema id of each line `logs --follow --json` prints.
const LOG_LINE_SCHEMA: &str = "flotilla.log-line.v1";

fn print_line(json: bool, line: &str) -> Result<()> {
    if json {
        outln!("{}", json!({"schema": LOG_LINE_SCHEMA, "line": line}))?;
    } else {
        outln!("{line}")?;
    }
    Ok(())
}

/// Prints what is appended to `path` after `offset`, for ever; starts over
/// when the file shrank (it was rotated).
async fn follow(json: bool, path: &Path, mut offset: u64) -> Result<()> {
    let mut partial = String::new();
    loop {
        tokio::time::sleep(FOLLOW_POLL).await;
        let Ok(mut file) = std::fs::File::open(path) else {
            continue;
        };
        let size = file.metadata()?.len();
        if size < offset {
            offset = 0;
            partial.clear();
        }
        if size == offset {
            continue;
        }
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.take(size - offset).read_to_end(&mut bytes)?;
        offset = size;
        partial.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = partial.find('\n') {
            let line: String = partial.drain(..=end).collect();
            print_line(json, line.trim_end_matches('\n'))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_or_all() {
        let text = "a\nb\nc\n";
        assert_eq!(last_lines(text, 2), ["b", "c"]);
        assert_eq!(last_lines(text, 0), ["a", "b", "c"]);
        assert_eq!(last_lines(text, 9), ["a", "b", "c"]);
        assert!(last_lines("", 5).is_empty());
    }
}
