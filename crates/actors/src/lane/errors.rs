//! Why a turn failed, as one class a fleet (or a script) can act on:
//! wait for a rate limit, move to another model at a usage wall, stop at
//! an auth error, restart a crashed CLI. A connector passes what its CLI
//! gives outside the error's text ([`ErrorSignal`]); [`classify`] decides
//! from that first, then from a status in the error's text, then from its
//! words (the APIs' own error types included), then from the exit code.
//! Pure: no IO.

use serde::{Deserialize, Serialize};

use super::TurnStatus;

/// The class of a turn that did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The provider's rate limit (HTTP 429 without a quota): retry later.
    RateLimited,
    /// A quota, billing or plan usage limit: another model or account, or
    /// wait for the reset.
    UsageLimit,
    /// The credentials were refused (HTTP 401/403).
    Auth,
    /// The model or its API refused or failed the request (another 4xx,
    /// a 5xx, a model that does not exist).
    ModelError,
    /// The CLI died of a signal (exit 128+N).
    CliCrash,
    /// The CLI could not be started (exit 126 or 127).
    CannotStart,
    /// The turn's deadline passed.
    TimedOut,
    /// Someone interrupted the turn.
    Interrupted,
    /// The native session to resume no longer exists.
    SessionNotFound,
    /// A failure none of the above describes; the error's text says more.
    Other,
}

/// What a CLI said about its failure in its structured output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorSignal {
    /// The HTTP status of the failed API call, where the CLI gives it
    /// outside its error's text (gemini: in its exit code).
    pub http_status: Option<u16>,
}

/// Classifies a turn that ended with `status` and `exit`, from the CLI's
/// `signal` and its error `text`. `None` for a completed turn or one lost
/// while the daemon was down (its end is unknown).
pub fn classify(
    status: TurnStatus,
    exit: Option<i32>,
    signal: &ErrorSignal,
    text: Option<&str>,
) -> Option<ErrorClass> {
    match status {
        TurnStatus::Completed | TurnStatus::Lost => return None,
        TurnStatus::TimedOut => return Some(ErrorClass::TimedOut),
        TurnStatus::Interrupted => return Some(ErrorClass::Interrupted),
        TurnStatus::Failed => {}
    }
    let words = text.unwrap_or_default().to_lowercase();
    let status = signal.http_status.or_else(|| http_status_in(&words));
    if let Some(class) = status.map(|s| by_status(s, &words)) {
        return Some(class);
    }
    if let Some(class) = by_words(&words) {
        return Some(class);
    }
    Some(match exit {
        Some(126 | 127) => ErrorClass::CannotStart,
        Some(code) if (129..=192).contains(&code) => ErrorClass::CliCrash,
        _ => ErrorClass::Other,
    })
}

fn by_status(status: u16, words: &str) -> ErrorClass {
    match status {
        402 => ErrorClass::UsageLimit,
        429 if is_quota(words) => ErrorClass::UsageLimit,
        429 => ErrorClass::RateLimited,
        401 | 403 => ErrorClass::Auth,
        _ => ErrorClass::ModelError,
    }
}

fn is_quota(words: &str) -> bool {
    [
        "quota exceeded",
        "exceeded your current quota",
        "insufficient_quota",
        "resource_exhausted",
        "billing",
        "credit balance",
        "usage limit",
        "usage_limit",
        "plan limit",
    ]
    .iter()
    .any(|w| words.contains(w))
}

fn by_words(words: &str) -> Option<ErrorClass> {
    if is_quota(words) {
        return Some(ErrorClass::UsageLimit);
    }
    let any = |list: &[&str]| list.iter().any(|w| words.contains(w));
    if any(&[
        "no conversation found",
        "session not found",
        "invalid session identifier",
        "no previous sessions found",
    ]) {
        return Some(ErrorClass::SessionNotFound);
    }
    if any(&["rate limit", "rate_limit", "ratelimit", "too many requests"]) {
        return Some(ErrorClass::RateLimited);
    }
    if any(&[
        "unauthorized",
        "authentication_error",
        "permission_error",
        "invalid api key",
        "invalid x-api-key",
        "authentication",
        "api key not valid",
        "permission denied",
        "forbidden",
    ]) {
        return Some(ErrorClass::Auth);
    }
    if any(&[
        "high demand",
        "server-side issue",
        "overloaded",
        "internal server error",
        "model not found",
        "invalid_request_error",
        "not_found_error",
        "server_error",
        "api_error",
    ]) {
        return Some(ErrorClass::ModelError);
    }
    None
}

/// An HTTP status written in an error's text: `API Error: 429`, `status
/// 401`, `429 Too Many Requests`, `[API Error: 500 ...]`, `(status code:
/// 503)`. Only 400 to 599, after a word that says it is one.
fn http_status_in(words: &str) -> Option<u16> {
    if let Some(code) = status_at(words.trim_start()) {
        return Some(code);
    }
    const MARKS: [&str; 9] = [
        "api error: ",
        "rejected (",
        "\"code\":",
        "status code: ",
        "status code ",
        "status: ",
        "status ",
        "http ",
        "error code: ",
    ];
    for mark in MARKS {
        for (at, _) in words.match_indices(mark) {
            if let Some(code) = status_at(&words[at + mark.len()..]) {
                return Some(code);
            }
        }
    }
    None
}

/// A status from 400 to 599 at the start of `rest`, as a whole number.
fn status_at(rest: &str) -> Option<u16> {
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let code = digits.parse::<u16>().ok()?;
    (digits.len() == 3 && (400..600).contains(&code)).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(signal: ErrorSignal, text: &str, exit: Option<i32>) -> Option<ErrorClass> {
        classify(TurnStatus::Failed, exit, &signal, Some(text))
    }

    fn status(code: u16) -> ErrorSignal {
        ErrorSignal {
            http_status: Some(code),
        }
    }

    #[test]
    fn the_structured_status_decides_first() {
        use ErrorClass::*;
        assert_eq!(failed(status(429), "slow down", Some(1)), Some(RateLimited));
        assert_eq!(
            failed(status(429), "You exceeded your current quota", Some(1)),
            Some(UsageLimit)
        );
        assert_eq!(failed(status(401), "", Some(1)), Some(Auth));
        assert_eq!(failed(status(403), "", Some(1)), Some(Auth));
        assert_eq!(
            failed(status(400), "rate limit words", Some(1)),
            Some(ModelError)
        );
        // Gemini exits with the HTTP status & 0xFF: 500 is 244, not a crash.
        assert_eq!(failed(status(500), "", Some(244)), Some(ModelError));
    }

    #[test]
    fn a_status_in_the_text_counts_when_nothing_structured_says_one() {
        use ErrorClass::*;
        let cases = [
            (
                "API Error: 429 {\"error\":{\"message\":\"x\"}}",
                RateLimited,
            ),
            ("[API Error: 401 Incorrect API key provided]", Auth),
            (
                "unexpected status 500 Internal Server Error: boom",
                ModelError,
            ),
            ("request failed (status code: 402)", UsageLimit),
            ("Error: HTTP 403", Auth),
            ("API Error: Request rejected (429) · slow down", RateLimited),
            (
                "[API Error: {\"error\":{\"code\":401,\"status\":\"UNAUTHENTICATED\"}}]",
                Auth,
            ),
            ("429 scripted", RateLimited),
            ("We're currently experiencing high demand", ModelError),
            (
                "{\"error\":{\"message\":\"x\",\"type\":\"invalid_request_error\"}}",
                ModelError,
            ),
            (
                "No conversation found with session ID: 1234",
                SessionNotFound,
            ),
            (
                "Please wait and try again later. To increase your limits, request a quota increase",
                Other,
            ),
        ];
        for (text, class) in cases {
            assert_eq!(
                failed(ErrorSignal::default(), text, Some(1)),
                Some(class),
                "{text}"
            );
        }
        assert_eq!(
            failed(
                ErrorSignal::default(),
                "wrote 429 lines; status 200",
                Some(1)
            ),
            Some(Other),
            "a number that is not a failed status is not one"
        );
    }

    #[test]
    fn words_then_the_exit_code_decide_when_no_status_is_known() {
        use ErrorClass::*;
        let none = ErrorSignal::default;
        let typed = |t: &str| format!("{{\"error\":{{\"type\":\"{t}\"}}}}");
        assert_eq!(
            failed(none(), &typed("rate_limit_error"), Some(1)),
            Some(RateLimited)
        );
        assert_eq!(
            failed(none(), &typed("billing_error"), Some(1)),
            Some(UsageLimit)
        );
        assert_eq!(
            failed(none(), "Invalid API key · Please run /login", Some(1)),
            Some(Auth)
        );
        assert_eq!(
            failed(none(), "You've hit your usage limit", Some(1)),
            Some(UsageLimit)
        );
        assert_eq!(
            failed(none(), "sh: claude: not found", Some(127)),
            Some(CannotStart)
        );
        assert_eq!(failed(none(), "", Some(137)), Some(CliCrash));
        assert_eq!(failed(none(), "", Some(2)), Some(Other));
        assert_eq!(
            failed(none(), "No conversation found", Some(1)),
            Some(SessionNotFound)
        );
    }

    #[test]
    fn the_lanes_own_ends_have_their_own_class() {
        let none = ErrorSignal::default();
        let of = |s| classify(s, Some(1), &none, Some("API Error: 429"));
        assert_eq!(of(TurnStatus::TimedOut), Some(ErrorClass::TimedOut));
        assert_eq!(of(TurnStatus::Interrupted), Some(ErrorClass::Interrupted));
        assert_eq!(of(TurnStatus::Completed), None);
        assert_eq!(of(TurnStatus::Lost), None);
    }
}
