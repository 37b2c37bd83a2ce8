//! Closed sets on the command line: which CLI, which permission mode. Each
//! flag parses straight into the type the rest of Flotilla uses
//! ([`CliKind`], [`Permissions`]), with the names that type owns, so the
//! names live in one place and the wire format cannot drift. clap lists the
//! values in `--help` and suggests the nearest one for a typo.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use flotilla_actors::lane::{CliKind, Permissions};

/// The CLIs with a Flotilla integration (`flotilla integrations`); the
/// others use the `flotilla` command.
pub(crate) const INTEGRATED_CLIS: [CliKind; 4] = [
    CliKind::Claude,
    CliKind::Codex,
    CliKind::Gemini,
    CliKind::Qwen,
];

/// Any CLI a lane can run.
pub(crate) fn any_cli() -> impl TypedValueParser<Value = CliKind> {
    cli_among(&CliKind::ALL)
}

/// A CLI with an integration.
pub(crate) fn integrated_cli() -> impl TypedValueParser<Value = CliKind> {
    cli_among(&INTEGRATED_CLIS)
}

fn cli_among(kinds: &'static [CliKind]) -> impl TypedValueParser<Value = CliKind> {
    let names = kinds.iter().map(|kind| PossibleValue::new(kind.as_str()));
    PossibleValuesParser::new(names).try_map(|name| name.parse::<CliKind>())
}

/// A permission mode, each explained in `--help`.
pub(crate) fn permissions() -> impl TypedValueParser<Value = Permissions> {
    let modes = Permissions::ALL.map(|mode| PossibleValue::new(mode.as_str()).help(meaning(mode)));
    PossibleValuesParser::new(modes).try_map(|name| name.parse::<Permissions>())
}

fn meaning(mode: Permissions) -> &'static str {
    match mode {
        Permissions::Default => "the CLI's own headless default",
        Permissions::Workspace => "edit files in the lane's directory, run sandboxed commands",
        Permissions::Bypass => "allow everything (said so in the lane's events)",
    }
}

#[cfg(test)]
mod tests {
    use clap::{Arg, Command};

    use super::*;

    fn parse<T: Clone + Send + Sync + 'static>(
        parser: impl TypedValueParser<Value = T>,
        value: &str,
    ) -> Result<T, clap::Error> {
        let cmd = Command::new("t").arg(Arg::new("v").long("v").value_parser(parser));
        let matches = cmd.try_get_matches_from(["t", "--v", value])?;
        Ok(matches.get_one::<T>("v").cloned().expect("a value"))
    }

    #[test]
    fn every_name_parses_into_the_shared_type() {
        for kind in CliKind::ALL {
            assert_eq!(parse(any_cli(), kind.as_str()).ok(), Some(kind));
        }
        for mode in Permissions::ALL {
            assert_eq!(parse(permissions(), mode.as_str()).ok(), Some(mode));
        }
        assert_eq!(parse(integrated_cli(), "qwen").ok(), Some(CliKind::Qwen));
    }

    #[test]
    fn a_typo_gets_the_nearest_name() {
        let err = parse(any_cli(), "claud").expect_err("typo");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        assert!(
            err.to_string().contains("a similar value exists: 'claude'"),
            "{err}"
        );
        let err = parse(permissions(), "workspce").expect_err("typo");
        assert!(err.to_string().contains("'workspace'"), "{err}");
    }

    #[test]
    fn only_integrated_clis_have_an_integration() {
        let err = parse(integrated_cli(), "pi").expect_err("pi has none");
        assert!(
            err.to_string()
                .contains("[possible values: claude, codex, gemini, qwen]"),
            "{err}"
        );
    }
}
