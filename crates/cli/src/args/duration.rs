//! Durations on the command line: the one syntax of every flag that takes
//! one (`--timeout`, `--wait`, `--ttl`, `--auto-archive-after`, discovery's
//! window). A plain number counts seconds (`30`, `0.5`); anything else is one
//! or more numbers with a unit, as humantime reads them (`500ms`, `30s`,
//! `5m`, `1h30m`, `2days`). Each flag converts to the seconds or
//! milliseconds its request carries, so the protocol does not change.

use std::ops::RangeInclusive;
use std::time::Duration;

/// The accepted forms, for error messages.
const FORMS: &str = "seconds (30) or a number with a unit: 500ms, 30s, 5m, 1h30m";

/// Why a value is not the duration a flag wants.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    /// Neither a number of seconds nor a duration with units.
    #[error("{value:?} is not a duration; use {FORMS}")]
    Malformed {
        /// The value given.
        value: String,
    },
    /// The flag counts whole seconds.
    #[error(
        "{value:?} is not a whole number of seconds; this flag counts seconds (30, 30s, 5m, 1h30m)"
    )]
    NotWholeSeconds {
        /// The value given.
        value: String,
    },
    /// Outside what the flag accepts.
    #[error("{value:?} is out of range; use {min} to {max}")]
    OutOfRange {
        /// The value given.
        value: String,
        /// The shortest accepted, as humantime writes it.
        min: String,
        /// The longest accepted.
        max: String,
    },
}

/// Reads a duration: a plain number of seconds, or numbers with units.
pub(crate) fn parse_duration(value: &str) -> Result<Duration, DurationError> {
    let malformed = || DurationError::Malformed {
        value: value.to_owned(),
    };
    let text = value.trim();
    match text.parse::<f64>() {
        Ok(secs) => Duration::try_from_secs_f64(secs).map_err(|_| malformed()),
        Err(_) => humantime::parse_duration(text).map_err(|_| malformed()),
    }
}

/// Reads a duration in whole seconds, for requests that carry seconds (a
/// lane's deadline, its auto-archive delay).
pub(crate) fn parse_whole_seconds(value: &str) -> Result<u64, DurationError> {
    let duration = parse_duration(value)?;
    if duration.subsec_nanos() != 0 {
        return Err(DurationError::NotWholeSeconds {
            value: value.to_owned(),
        });
    }
    Ok(duration.as_secs())
}

/// Reads a duration that must lie within `range`.
pub(crate) fn parse_within(
    value: &str,
    range: RangeInclusive<Duration>,
) -> Result<Duration, DurationError> {
    let duration = parse_duration(value)?;
    if !range.contains(&duration) {
        return Err(DurationError::OutOfRange {
            value: value.to_owned(),
            min: humantime::format_duration(*range.start()).to_string(),
            max: humantime::format_duration(*range.end()).to_string(),
        });
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_number_counts_seconds() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 2 "), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn units_and_combinations_are_read() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2days"), Ok(Duration::from_secs(172_800)));
    }

    #[test]
    fn anything_else_names_the_value_and_the_forms() {
        for bad in ["soon", "-1", "", "NaN", "inf", "5 parsecs", "1e400"] {
            let err = parse_duration(bad).expect_err(bad);
            let text = err.to_string();
            assert!(text.contains(&format!("{bad:?}")), "{text}");
            assert!(text.contains("500ms, 30s, 5m, 1h30m"), "{text}");
        }
    }

    #[test]
    fn whole_seconds_refuse_a_fraction() {
        assert_eq!(parse_whole_seconds("90"), Ok(90));
        assert_eq!(parse_whole_seconds("1m30s"), Ok(90));
        assert_eq!(parse_whole_seconds("2000ms"), Ok(2));
        assert!(matches!(
            parse_whole_seconds("1500ms"),
            Err(DurationError::NotWholeSeconds { .. })
        ));
        assert!(matches!(
            parse_whole_seconds("0.5"),
            Err(DurationError::NotWholeSeconds { .. })
        ));
    }

    #[test]
    fn a_range_is_enforced_and_named() {
        let range = Duration::from_millis(100)..=Duration::from_secs(60);
        assert_eq!(
            parse_within("500ms", range.clone()),
            Ok(Duration::from_millis(500))
        );
        let err = parse_within("61s", range.clone()).expect_err("too long");
        assert_eq!(err.to_string(), "\"61s\" is out of range; use 100ms to 1m");
        assert!(parse_within("0", range).is_err());
    }
}
