//! `flotilla completions SHELL` and `flotilla man [--out DIR]`: both are
//! rendered from the clap definition of the command line, so they always
//! match the flags of this build. Neither needs a home or a daemon.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::CommandFactory;
use serde_json::json;

use crate::args::Cli;
use crate::exit::OK;
use crate::output::{self, out, outln};

/// The program's name, in scripts and page names.
const NAME: &str = "flotilla";

/// Prints the completion script of `shell`.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut visible_command(), NAME, &mut script);
    out!("{}", String::from_utf8_lossy(&script))?;
    Ok(OK)
}

/// The command line without its hidden, internal commands (`hook`,
/// `lane-shim`), which clap_complete would offer too (clap issue 1335).
fn visible_command() -> clap::Command {
    let full = Cli::command();
    let visible = full.get_subcommands().filter(|s| !s.is_hide_set()).cloned();
    clap::Command::new(NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .args(full.get_arguments().cloned())
        .subcommands(visible)
}

/// Prints the main page, or writes every page into `dir`.
pub(crate) fn man(dir: Option<&Path>, json: bool) -> Result<u8> {
    let Some(dir) = dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command()).render(&mut page)?;
        out!("{}", String::from_utf8_lossy(&page))?;
        return Ok(OK);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Built, the subcommands carry their full names (`flotilla-lane-run`).
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    write_pages(cmd, dir, &mut pages)
        .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
    if json {
        let pages: Vec<String> = pages.iter().map(|p| p.display().to_string()).collect();
        output::json(
            &json!({"schema": "flotilla.man.v1", "dir": dir.display().to_string(), "pages": pages}),
        )?;
    } else {
        outln!("wrote {} pages to {}", pages.len(), dir.display())?;
    }
    Ok(OK)
}

/// Writes the page of `cmd` and of each visible subcommand, depth first.
fn write_pages(cmd: clap::Command, dir: &Path, pages: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir, pages)?;
    }
    pages.push(clap_mangen::Man::new(cmd).generate_to(dir)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cmd: &clap::Command) -> Vec<&str> {
        cmd.get_subcommands().map(|s| s.get_name()).collect()
    }

    #[test]
    fn completions_offer_every_visible_command_and_no_internal_one() {
        let full = Cli::command();
        let visible = visible_command();
        let expected: Vec<&str> = full
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name())
            .collect();
        assert_eq!(names(&visible), expected);
        assert!(!names(&visible).contains(&"lane-shim"));
        assert!(names(&full).contains(&"lane-shim"));
        let flags: Vec<_> = visible.get_arguments().map(|a| a.get_id()).collect();
        assert!(flags.iter().any(|id| *id == "json") && flags.iter().any(|id| *id == "home"));
    }
}
