//! Exit codes and error reports: the contract scripts rely on (documented in
//! docs/cli.md). Errors go to stderr as text with a hint; with `--json` an
//! `{"error": {...}}` object also goes to stdout. That holds for a command
//! line clap refuses too ([`report_parse_error`]): clap's own text on stderr,
//! and with `--json` the envelope (code `usage`, exit 2) on stdout.

use std::process::ExitCode;

use flotilla_actors::protocol::{ControlError, ErrorCode};
use flotilla_host::client::ClientError;
use flotilla_host::daemon::DaemonError;
use flotilla_host::store_file::StoreFileError;
use serde_json::json;

use crate::commands::mail::SendInDoubt;
use crate::output::{self, outln};

/// Success.
pub(crate) const OK: u8 = 0;
/// The operation failed (a check failed, the disk failed, a bug).
pub(crate) const FAILED: u8 = 1;
/// Bad usage or invalid input (a name, a group, a size, a malformed request).
pub(crate) const USAGE: u8 = 2;
/// No daemon is running for this home.
pub(crate) const NOT_RUNNING: u8 = 3;
/// A peer or message does not exist.
pub(crate) const NOT_FOUND: u8 = 4;
/// Refused by the rules: targets not visible, not a member, not allowed.
pub(crate) const REFUSED: u8 = 5;
/// Conflicts with the current state: already exists, unread messages, another daemon holds the home.
pub(crate) const CONFLICT: u8 = 6;
/// Temporarily unavailable: retry.
pub(crate) const UNAVAILABLE: u8 = 7;
/// A wait ended first (`lane wait --timeout`), or a lane turn timed out.
pub(crate) const TIMED_OUT: u8 = 124;

/// An error with a chosen exit code, raised by the CLI itself.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct CliError {
    pub(crate) code: u8,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl CliError {
    pub(crate) fn usage(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
        Self {
            code: USAGE,
            message: message.into(),
            hint: Some(hint.into()),
        }
        .into()
    }

    pub(crate) fn failed(message: impl Into<String>, hint: Option<String>) -> anyhow::Error {
        Self {
            code: FAILED,
            message: message.into(),
            hint,
        }
        .into()
    }
}

pub(crate) fn control_code(e: &ControlError) -> u8 {
    match e.code {
        ErrorCode::BadRequest
        | ErrorCode::InvalidName
        | ErrorCode::TooLarge
        | ErrorCode::UnsupportedVersion => USAGE,
        ErrorCode::NotFound => NOT_FOUND,
        ErrorCode::TargetsRefused | ErrorCode::NotMember | ErrorCode::Forbidden => REFUSED,
        ErrorCode::AlreadyExists | ErrorCode::Conflict => CONFLICT,
        ErrorCode::Unavailable => UNAVAILABLE,
        ErrorCode::TimedOut => TIMED_OUT,
        _ => FAILED,
    }
}

/// The exit code, stable code name, hint and details of a client's error.
fn client_code(e: &ClientError) -> (u8, &'static str, Option<String>, Option<serde_json::Value>) {
    match e {
        ClientError::NotRunning { .. } => (NOT_RUNNING, "not_running", None, None),
        ClientError::Refused(c) => (
            control_code(c),
            c.code.as_str(),
            c.hint.clone(),
            c.details.as_deref().cloned(),
        ),
        ClientError::Connection(_) => (
            UNAVAILABLE,
            "connection_lost",
            Some("retry; `flotilla host status` shows whether the daemon is up".into()),
            None,
        ),
        _ => (FAILED, "failed", None, None),
    }
}

/// The exit code, stable code name and hint of an error.
fn classify(err: &anyhow::Error) -> (u8, &'static str, Option<String>, Option<serde_json::Value>) {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<ControlError>() {
            return (
                control_code(e),
                e.code.as_str(),
                e.hint.clone(),
                e.details.as_deref().cloned(),
            );
        }
        if let Some(e) = cause.downcast_ref::<SendInDoubt>() {
            let (code, name, _, _) = client_code(e.cause());
            return (code, name, Some(e.hint()), Some(json!({ "id": e.id() })));
        }
        if let Some(e) = cause.downcast_ref::<ClientError>() {
            return client_code(e);
        }
        if let Some(e) = cause.downcast_ref::<DaemonError>() {
            return match e {
                DaemonError::Lock(_)
                | DaemonError::Store(flotilla_actors::store::StoreError::Locked { .. }) => {
                    (CONFLICT, "already_running", None, None)
                }
                DaemonError::StoreFile(e) => store_file_code(e),
                _ => (FAILED, "daemon_failed", None, None),
            };
        }
        if let Some(e) = cause.downcast_ref::<StoreFileError>() {
            return store_file_code(e);
        }
        if let Some(found) = cause
            .downcast_ref::<flotilla_hub::setup::SetupError>()
            .and_then(setup_code)
        {
            return found;
        }
        if let Some(found) = cause
            .downcast_ref::<flotilla_actors::pki::PkiError>()
            .and_then(pki_code)
        {
            return found;
        }
        if let Some(e) = cause.downcast_ref::<flotilla_host::hub_server::HubServerError>() {
            use flotilla_host::hub_server::HubServerError as H;
            match e {
                H::Listen(_) => return (USAGE, "invalid_address", None, None),
                H::NotInitialized(_) => return (NOT_FOUND, "no_hub", None, None),
                H::Bind(_) => return (FAILED, "bind_failed", None, None),
                H::Web(
                    flotilla_hub::web::WebError::Address(_)
                    | flotilla_hub::web::WebError::NotLoopback(_),
                ) => return (USAGE, "invalid_address", None, None),
                H::Web(flotilla_hub::web::WebError::Bind { .. }) => {
                    return (FAILED, "bind_failed", None, None);
                }
                H::Control(flotilla_hub::control::HubControlError::NotRunning { .. }) => {
                    return (NOT_RUNNING, "hub_not_running", None, None);
                }
                H::Setup(e) => {
                    if let Some(found) = setup_code(e) {
                        return found;
                    }
                }
                _ => {}
            }
        }
        if let Some(found) = cause
            .downcast_ref::<flotilla_host::enrollment::EnrollmentError>()
            .and_then(enrollment_code)
        {
            return found;
        }
        if let Some(e) = cause.downcast_ref::<flotilla_actors::names::NameError>() {
            let _ = e;
            return (USAGE, "invalid_name", None, None);
        }
        if let Some(e) = cause.downcast_ref::<CliError>() {
            let name = match e.code {
                USAGE => "usage",
                NOT_RUNNING => "not_running",
                CONFLICT => "conflict",
                _ => "failed",
            };
            return (e.code, name, e.hint.clone(), None);
        }
    }
    (FAILED, "failed", None, None)
}

type Classified = (u8, &'static str, Option<String>, Option<serde_json::Value>);

fn store_file_code(e: &StoreFileError) -> Classified {
    match e {
        StoreFileError::Lost { .. } => (CONFLICT, "store_missing", e.hint(), None),
        _ => (FAILED, "daemon_failed", None, None),
    }
}

fn setup_code(e: &flotilla_hub::setup::SetupError) -> Option<Classified> {
    use flotilla_hub::setup::SetupError as S;
    Some(match e {
        S::CaExists(_) => (CONFLICT, "ca_exists", None, None),
        S::NoCa(_) => (NOT_FOUND, "no_ca", None, None),
        S::Missing { .. } => (NOT_FOUND, "missing_file", None, None),
        S::Pki(e) => return pki_code(e),
        _ => return None,
    })
}

fn pki_code(e: &flotilla_actors::pki::PkiError) -> Option<Classified> {
    use flotilla_actors::pki::PkiError as P;
    Some(match e {
        P::KeyExists(_) => (CONFLICT, "key_exists", None, None),
        P::InvalidName { .. } => (USAGE, "invalid_name", None, None),
        _ => return None,
    })
}

fn enrollment_code(e: &flotilla_host::enrollment::EnrollmentError) -> Option<Classified> {
    use flotilla_actors::federation::enroll::EnrollRefusalCode as R;
    use flotilla_host::enrollment::EnrollmentError as E;
    use flotilla_hub::enroll::client::EnrollClientError as C;
    let (code, name) = match e {
        E::NotHub(_) => (NOT_FOUND, "no_hub"),
        E::Addr(_) | E::ConfigValue(_) => (USAGE, "no_address"),
        E::Token(_) => (USAGE, "invalid_token"),
        E::NameMismatch { .. } => (REFUSED, "wrong_host"),
        E::NothingToRevoke(_) => (NOT_FOUND, "not_enrolled"),
        E::Setup(e) => return setup_code(e),
        E::Pki(e) => return pki_code(e),
        E::Client(C::Unreachable { .. }) => (UNAVAILABLE, "hub_unreachable"),
        E::Client(C::CaMismatch { .. }) => (REFUSED, "ca_mismatch"),
        E::Client(C::HubCertificate { .. }) => (REFUSED, "hub_certificate"),
        E::Client(C::CertificateRefused { .. }) => (REFUSED, "certificate_refused"),
        E::Client(C::Refused { code, .. }) => match code {
            R::UnknownToken => (NOT_FOUND, "token_unknown"),
            R::TokenUsed => (CONFLICT, "token_used"),
            R::TokenExpired => (REFUSED, "token_expired"),
            R::WrongHost => (REFUSED, "wrong_host"),
            R::NotAuthenticated => (REFUSED, "not_authenticated"),
            R::BadRequest => (USAGE, "bad_request"),
            _ => (FAILED, "hub_failed"),
        },
        _ => return None,
    };
    Some((code, name, None, None))
}

/// The JSON error envelope of an error (`{"error": {...}}`) and its exit
/// code: what `--json` prints and what `flotilla mcp` returns as a tool
/// error.
pub(crate) fn envelope(err: &anyhow::Error) -> (serde_json::Value, u8) {
    let (code, name, hint, details) = classify(err);
    let hint = hint.map(|h| crate::hint::paste(&h));
    let obj = json!({"error": {"code": name, "exit": code, "message": message(err), "hint": hint, "details": details}});
    (obj, code)
}

/// An error and its causes on one line, each cause said once: many errors
/// already name their cause in their own text (`... : Address already in
/// use`), and anyhow's `{:#}` would repeat it.
pub(crate) fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Prints an error and returns its exit code; a closed stdout is no error
/// (the reader has all it wanted) and ends quietly with 0.
pub(crate) fn report(err: &anyhow::Error, json: bool) -> ExitCode {
    if output::is_closed_stdout(err) {
        return ExitCode::from(OK);
    }
    let (obj, code) = envelope(err);
    eprintln!("error: {}", message(err));
    if let Some(h) = obj["error"]["hint"].as_str() {
        eprintln!("hint: {h}");
    }
    if json {
        // Nothing more can be said if stdout fails too: stderr has the error.
        let _ = outln!("{obj}");
    }
    ExitCode::from(code)
}

/// Ends a command line that clap could not parse. `--help` and `--version`
/// print as usual (exit 0); an error prints clap's text on stderr and exits
/// 2, and with `json` also prints the error envelope on stdout.
pub(crate) fn report_parse_error(err: &clap::Error, json: bool) -> ExitCode {
    if !json || !err.use_stderr() {
        err.exit();
    }
    let _ = err.print();
    let (message, hint) = parse_error_parts(&err.render().to_string());
    let (obj, code) = envelope(&CliError::usage(message, hint));
    // stderr has the error already if stdout fails too.
    let _ = outln!("{obj}");
    ExitCode::from(code)
}

/// The message (clap's first line) and hint (its tips and notes, without
/// the usage block) of clap's rendered error.
fn parse_error_parts(rendered: &str) -> (String, String) {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    let mut hints = Vec::new();
    let mut in_usage = false;
    for line in lines.map(str::trim) {
        in_usage = (in_usage || line.starts_with("Usage:")) && !line.is_empty();
        if !in_usage && !line.is_empty() {
            hints.push(line.strip_prefix("tip: ").unwrap_or(line));
        }
    }
    (message, hints.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_error_splits_into_message_and_hints_without_the_usage() {
        let rendered = "error: invalid value 'claud' for '--cli <CLI>'\n  [possible values: exec, claude]\n\n  tip: a similar value exists: 'claude'\n\nUsage: flotilla lane run --cli <CLI>\n    [-- <ARGS>...]\n\nFor more information, try '--help'.\n";
        let (message, hint) = parse_error_parts(rendered);
        assert_eq!(message, "invalid value 'claud' for '--cli <CLI>'");
        assert_eq!(
            hint,
            "[possible values: exec, claude]; a similar value exists: 'claude'; For more information, try '--help'."
        );
    }

    #[derive(Debug, thiserror::Error)]
    #[error("cannot listen on 127.0.0.1:1: {source}; pick another port")]
    struct Bind {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_an_error_already_names_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::AddrInUse, "Address already in use");
        let err = anyhow::Error::new(Bind { source: io });
        assert_eq!(
            message(&err),
            "cannot listen on 127.0.0.1:1: Address already in use; pick another port"
        );
        let chained = anyhow::anyhow!("disk gone").context("cannot save");
        assert_eq!(
            message(&chained),
            "cannot save: disk gone",
            "other causes still show"
        );
    }
}
