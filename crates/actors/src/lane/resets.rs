//! When a usage wall lifts, read from what the CLI said: a fleet whose
//! member hit a rate or usage limit waits exactly that long instead of its
//! own guess. Only the forms the CLIs and the APIs behind them print are
//! read; a wall clock time without a date or zone ("try again at 3:04 PM")
//! is not, because it cannot be placed. Pure: no IO, no clock.

/// The longest wait a reset time may ask for: a later one is not trusted.
pub const MAX_RESET_MS: u64 = 24 * 3600 * 1000;

/// The moment (ms since the epoch) a limit that `text` describes lifts,
/// given that the text was printed at `at_ms`; `None` when the text names
/// none, or one more than a day away.
///
/// Read, in this order:
/// - Claude Code's `... limit reached|1767225600` (the reset, in seconds
///   since the epoch);
/// - Google's `"retryDelay": "41s"`;
/// - `try again in`, `retry in`, `retry after`, `resets in`, `reset in`,
///   `retry-after:` followed by a duration: `41.5s`, `41 seconds`,
///   `2 hours 3 minutes`, `1h30m`, `5 min`, or a bare number of seconds.
pub fn resets_at(text: &str, at_ms: u64) -> Option<u64> {
    let words = text.to_lowercase();
    let reset = epoch_after_bar(&words)
        .map(|s| s.saturating_mul(1000))
        .or_else(|| {
            after_marker(&words, &["\"retrydelay\": \"", "\"retrydelay\":\""])
                .map(|ms| at_ms.saturating_add(ms))
        })
        .or_else(|| {
            let markers = [
                "try again in",
                "retry in",
                "retry after",
                "resets in",
                "reset in",
                "retry-after:",
            ];
            after_marker(&words, &markers).map(|ms| at_ms.saturating_add(ms))
        })?;
    (reset > at_ms && reset - at_ms <= MAX_RESET_MS).then_some(reset)
}

/// Claude Code's form: `limit reached|SECONDS`.
fn epoch_after_bar(words: &str) -> Option<u64> {
    let at = words.find("limit reached|")? + "limit reached|".len();
    let digits: String = words[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (digits.len() >= 9).then(|| digits.parse().ok()).flatten()
}

/// The duration after the first of `markers` that has one.
fn after_marker(words: &str, markers: &[&str]) -> Option<u64> {
    markers.iter().find_map(|m| {
        let at = words.find(m)? + m.len();
        duration_ms(&words[at..])
    })
}

/// A duration at the start of `text` (spaces first): one or more
/// number-unit pairs; a bare number is seconds.
fn duration_ms(text: &str) -> Option<u64> {
    let mut rest = text.trim_start();
    let mut total: Option<f64> = None;
    for _ in 0..4 {
        let number: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let Ok(value) = number.parse::<f64>() else {
            break;
        };
        rest = rest[number.len()..].trim_start();
        let unit: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
        let Some(scale) = unit_ms(&unit) else {
            // A bare number: seconds, and nothing may follow it.
            return total.is_none().then_some((value * 1000.0) as u64);
        };
        total = Some(total.unwrap_or(0.0) + value * scale);
        rest = rest[unit.len()..].trim_start_matches([' ', ',']);
        rest = rest.strip_prefix("and ").unwrap_or(rest);
    }
    total
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map(|t| t as u64)
}

fn unit_ms(unit: &str) -> Option<f64> {
    Some(match unit {
        "ms" | "millisecond" | "milliseconds" => 1.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1000.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = 1_767_225_000_000;

    #[test]
    fn the_forms_the_clis_print_are_read() {
        let cases = [
            ("Claude AI usage limit reached|1767225600", AT + 600_000),
            (r#"{"retryDelay": "41s"}"#, AT + 41_000),
            ("Please retry in 41.5s.", AT + 41_500),
            (
                "Rate limited. Try again in 2 hours 3 minutes",
                AT + 7_380_000,
            ),
            ("try again in 1h30m", AT + 5_400_000),
            ("quota exceeded; resets in 5 min", AT + 300_000),
            ("429 Too Many Requests, Retry-After: 20", AT + 20_000),
            ("limit hit, try again in 1 seconds", AT + 1_000),
        ];
        for (text, want) in cases {
            assert_eq!(resets_at(text, AT), Some(want), "{text}");
        }
    }

    #[test]
    fn no_time_or_an_unplaceable_one_is_none() {
        for text in [
            "rate limited",
            "try again at 3:04 PM",
            "try again later",
            "retry in a moment",
            "Claude AI usage limit reached|soon",
        ] {
            assert_eq!(resets_at(text, AT), None, "{text}");
        }
    }

    #[test]
    fn a_reset_in_the_past_or_beyond_a_day_is_not_trusted() {
        assert_eq!(resets_at("usage limit reached|1000000000", AT), None);
        assert_eq!(resets_at("try again in 25 hours", AT), None);
        assert_eq!(resets_at("try again in 0 seconds", AT), None);
    }
}
