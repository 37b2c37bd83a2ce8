//! What a lane's process is made of, checked before a lane exists: the
//! command line and environment must be something `execve` can carry.
//!
//! Pure rules, no IO: a NUL byte cannot be in an argument, a variable's name
//! or value (the C strings of `execve` end at the first one), and a
//! variable's name must be non-empty and free of `=` (the separator of
//! `NAME=VALUE`). The daemon checks a start request with [`check`] at
//! admission, so a bad one is refused as a request error and leaves no lane
//! behind.

use crate::protocol::{ControlError, ErrorCode};

/// Why a lane's command line or environment cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaneInputError {
    /// An argument holds a NUL byte.
    #[error("argument {position} of the lane's command line ({value:?}) contains a NUL byte")]
    NulInArgument {
        /// Its position, from 1.
        position: usize,
        /// The argument, escaped for display.
        value: String,
    },
    /// The model holds a NUL byte (it is passed as an argument).
    #[error("the model {0:?} contains a NUL byte")]
    NulInModel(String),
    /// A variable's name holds a NUL byte.
    #[error("the name of environment variable {0:?} contains a NUL byte")]
    NulInEnvName(String),
    /// A variable's value holds a NUL byte.
    #[error("the value of environment variable {0} contains a NUL byte")]
    NulInEnvValue(String),
    /// A variable's name is empty.
    #[error("environment variable {position} has an empty name")]
    EmptyEnvName {
        /// Its position in the request's `env`, from 1.
        position: usize,
    },
    /// A variable's name holds `=`.
    #[error("the name of environment variable {0:?} contains '='")]
    EqualsInEnvName(String),
}

impl LaneInputError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::NulInArgument { .. } | Self::NulInModel(_) => {
                "a process argument cannot hold a NUL byte: remove it, or pass such data \
                 in the prompt or a file"
            }
            Self::NulInEnvName(_) | Self::NulInEnvValue(_) => {
                "an environment variable cannot hold a NUL byte: remove it from --env, \
                 or pass such data in the prompt or a file"
            }
            Self::EmptyEnvName { .. } | Self::EqualsInEnvName(_) => {
                "write --env NAME=VALUE with a non-empty NAME; everything after the first '=' \
                 is the value"
            }
        }
    }
}

impl From<LaneInputError> for ControlError {
    fn from(e: LaneInputError) -> Self {
        let hint = e.hint();
        Self::new(ErrorCode::BadRequest, e.to_string()).with_hint(hint)
    }
}

/// Checks a lane's arguments, model and environment; the first problem
/// found is the error.
pub fn check(
    args: &[String],
    model: Option<&str>,
    env: &[(String, String)],
) -> Result<(), LaneInputError> {
    if let Some((i, arg)) = args.iter().enumerate().find(|(_, a)| a.contains('\0')) {
        return Err(LaneInputError::NulInArgument {
            position: i + 1,
            value: arg.clone(),
        });
    }
    if let Some(m) = model.filter(|m| m.contains('\0')) {
        return Err(LaneInputError::NulInModel(m.to_owned()));
    }
    for (i, (name, value)) in env.iter().enumerate() {
        if name.is_empty() {
            return Err(LaneInputError::EmptyEnvName { position: i + 1 });
        }
        if name.contains('\0') {
            return Err(LaneInputError::NulInEnvName(name.clone()));
        }
        if name.contains('=') {
            return Err(LaneInputError::EqualsInEnvName(name.clone()));
        }
        if value.contains('\0') {
            return Err(LaneInputError::NulInEnvValue(name.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn ordinary_input_passes() {
        let e = env(&[
            ("A", "1"),
            ("PATH", "/bin:/usr/bin"),
            ("EMPTY", ""),
            ("X", "a=b"),
        ]);
        assert_eq!(
            check(&args(&["sh", "-c", "echo hi"]), Some("m"), &e),
            Ok(())
        );
        assert_eq!(check(&[], None, &[]), Ok(()));
    }

    #[test]
    fn issue_13_nul_bytes_are_refused_naming_where() {
        let err = check(&args(&["sh", "-c", "a\0b"]), None, &[]).expect_err("nul");
        assert_eq!(
            err.to_string(),
            "argument 3 of the lane's command line (\"a\\0b\") contains a NUL byte"
        );
        let err = check(&[], Some("m\0"), &[]).expect_err("nul");
        assert!(err.to_string().contains("model"), "{err}");
        let err =
            check(&[], None, &env(&[("OK", "1"), ("TOKEN", "hunter\0two")])).expect_err("nul");
        assert_eq!(err, LaneInputError::NulInEnvValue("TOKEN".into()));
        assert!(
            !err.to_string().contains("hunter"),
            "the value is not echoed"
        );
        let err = check(&[], None, &env(&[("A\0B", "v")])).expect_err("nul");
        assert!(err.to_string().contains("\"A\\0B\""), "{err}");
    }

    #[test]
    fn issue_13_env_names_must_be_non_empty_and_free_of_equals() {
        let err = check(&[], None, &env(&[("A", "1"), ("", "v")])).expect_err("empty");
        assert_eq!(err, LaneInputError::EmptyEnvName { position: 2 });
        let err = check(&[], None, &env(&[("A=B", "v")])).expect_err("equals");
        assert_eq!(err, LaneInputError::EqualsInEnvName("A=B".into()));
        let control = ControlError::from(err);
        assert_eq!(control.code, ErrorCode::BadRequest);
        assert!(control.hint.is_some_and(|h| h.contains("NAME=VALUE")));
    }
}
