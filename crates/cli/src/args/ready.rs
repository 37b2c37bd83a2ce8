//! The arguments of `flotilla ready`: a repository's readiness for lanes.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct ReadyCli {
    /// The repository (any directory in it; default: the current directory).
    #[arg(value_name = "REPO")]
    pub(crate) repo: Option<PathBuf>,
    /// Write the detected profile to .flotilla/profile.toml (never over an existing file).
    #[arg(long)]
    pub(crate) write: bool,
    /// A plan file (Markdown or text; `-`: stdin) for a lane to review against the profile.
    #[arg(long, value_name = "FILE")]
    pub(crate) plan: Option<String>,
    /// The plan reviewer's CLI (default: policy.toml's first reviewer that is installed); when it is not installed another stands in, and the output says so.
    #[arg(long, value_name = "CLI", value_parser = super::choices::any_cli(), requires = "plan")]
    pub(crate) reviewer: Option<flotilla_actors::lane::CliKind>,
    /// The reviewer's model (dropped when another CLI stands in).
    #[arg(short = 'm', long, requires = "plan")]
    pub(crate) model: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use flotilla_actors::lane::CliKind;

    use crate::args::{Cli, Command};

    fn parse(args: &[&str]) -> Result<super::ReadyCli, clap::Error> {
        let mut all = vec!["flotilla", "ready"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all)?.command {
            Command::Ready(r) => Ok(r),
            other => panic!("not ready: {other:?}"),
        }
    }

    #[test]
    fn the_repository_defaults_to_none_and_nothing_is_written() {
        let r = parse(&[]).expect("parse");
        assert_eq!((r.repo, r.write, r.plan), (None, false, None));
    }

    #[test]
    fn write_plan_reviewer_and_model_parse() {
        let r = parse(&[
            "/src/app",
            "--write",
            "--plan",
            "plan.md",
            "--reviewer",
            "claude",
            "-m",
            "opus",
        ])
        .expect("parse");
        assert_eq!(r.repo.as_deref(), Some(std::path::Path::new("/src/app")));
        assert!(r.write);
        assert_eq!(r.plan.as_deref(), Some("plan.md"));
        assert_eq!(r.reviewer, Some(CliKind::Claude));
        assert_eq!(r.model.as_deref(), Some("opus"));
    }

    #[test]
    fn a_reviewer_or_model_needs_a_plan_and_the_reviewer_is_a_known_cli() {
        assert!(parse(&["--reviewer", "claude"]).is_err());
        assert!(parse(&["-m", "opus"]).is_err());
        let err = parse(&["--plan", "p.md", "--reviewer", "claud"]).expect_err("unknown");
        assert!(err.to_string().contains("claude"), "{err}");
    }
}
