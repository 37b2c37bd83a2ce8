//! Service mode's reply check: a request says which fields its reply must
//! have and which values some may take; a worker's reply that is not JSON
//! of that shape is bounced with every reason.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a request asks of its reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplySpec {
    /// Fields the reply's object must have.
    #[serde(default)]
    pub required: Vec<String>,
    /// For some fields, the only values allowed.
    #[serde(default)]
    pub allowed: BTreeMap<String, Vec<Value>>,
}

/// One reason a reply was bounced.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplyFault {
    /// The reply holds no JSON object.
    #[error("the reply is not a JSON object ({why}); answer with one JSON object only")]
    NotJson {
        /// The parser's complaint.
        why: String,
    },
    /// A required field is missing.
    #[error("the reply lacks the required field {field:?}")]
    Missing {
        /// The field.
        field: String,
    },
    /// A field holds a value that is not allowed.
    #[error("{field:?} is {value}; allowed: {allowed}")]
    NotAllowed {
        /// The field.
        field: String,
        /// The value given.
        value: Value,
        /// The allowed values, as JSON.
        allowed: String,
    },
}

/// Checks a worker's `reply` text against `spec`. The reply may wrap its
/// object in a fenced code block, as models often do; anything else
/// around the object is refused.
pub fn check_reply(spec: &ReplySpec, reply: &str) -> Result<Value, Vec<ReplyFault>> {
    let body = unfence(reply.trim());
    let value: Value =
        serde_json::from_str(body).map_err(|e| vec![ReplyFault::NotJson { why: e.to_string() }])?;
    let Some(object) = value.as_object() else {
        let why = "it is not an object".to_owned();
        return Err(vec![ReplyFault::NotJson { why }]);
    };
    let mut faults: Vec<ReplyFault> = spec
        .required
        .iter()
        .filter(|f| !object.contains_key(f.as_str()))
        .map(|field| ReplyFault::Missing {
            field: field.clone(),
        })
        .collect();
    for (field, allowed) in &spec.allowed {
        if let Some(value) = object.get(field)
            && !allowed.contains(value)
        {
            faults.push(ReplyFault::NotAllowed {
                field: field.clone(),
                value: value.clone(),
                allowed: Value::Array(allowed.clone()).to_string(),
            });
        }
    }
    if faults.is_empty() {
        Ok(value)
    } else {
        Err(faults)
    }
}

/// The inside of one ```` ``` ```` or ```` ```json ```` block, or `text`.
pub(crate) fn unfence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").map_or(text, str::trim)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn spec() -> ReplySpec {
        serde_json::from_str(
            r#"{"required": ["verdict", "why"], "allowed": {"verdict": ["pass", "fail"]}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_valid_reply_passes_even_fenced() {
        let ok = check_reply(&spec(), r#"{"verdict": "pass", "why": "tests green"}"#).unwrap();
        assert_eq!(ok["verdict"], "pass");
        let fenced = "```json\n{\"verdict\": \"fail\", \"why\": \"x\"}\n```";
        assert!(check_reply(&spec(), fenced).is_ok());
    }

    #[test]
    fn every_fault_is_named() {
        let faults = check_reply(&spec(), r#"{"verdict": "maybe"}"#).unwrap_err();
        let text: Vec<String> = faults.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "the reply lacks the required field \"why\"",
                "\"verdict\" is \"maybe\"; allowed: [\"pass\",\"fail\"]",
            ]
        );
        let prose = check_reply(&spec(), "Sure! {\"verdict\": \"pass\"}").unwrap_err();
        assert!(matches!(prose[0], ReplyFault::NotJson { .. }));
        let list = check_reply(&spec(), "[1]").unwrap_err();
        assert!(list[0].to_string().contains("not an object"));
    }
}
