//! Reading an answer of the hub's control socket without reading its
//! roster into types: the roster is passed, value by value, to any serde
//! serializer (`hub roster --json` prints it through a pretty one). Owns
//! only the answer's outer shape (`{"roster":…}` or `{"error":"…"}`, as
//! [`super::HubAnswer`] is written); must not read the roster itself.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};

/// Visits an answer: passes its roster to the serializer, or returns the
/// hub's error.
pub(super) struct AnswerVisitor<S>(pub(super) S);

impl<'de, S: serde::Serializer> Visitor<'de> for AnswerVisitor<S> {
    /// The hub's error, if it refused.
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a hub answer: {\"roster\":…} or {\"error\":\"…\"}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let key: String = map
            .next_key()?
            .ok_or_else(|| A::Error::custom("an empty answer"))?;
        let refused = match &*key {
            "roster" => {
                map.next_value_seed(Transcode(self.0))?;
                None
            }
            "error" => Some(map.next_value::<String>()?),
            other => return Err(A::Error::unknown_variant(other, &["roster", "error"])),
        };
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(A::Error::custom("an answer with more than one part"));
        }
        Ok(refused)
    }
}

/// Passes the value it is given to the serializer.
struct Transcode<S>(S);

impl<'de, S: serde::Serializer> DeserializeSeed<'de> for Transcode<S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, from: D) -> Result<(), D::Error> {
        serde_transcode::transcode(from, self.0)
            .map(|_| ())
            .map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ANSWER_TAIL, HubAnswer, HubControlError, ROSTER_HEAD, transcode_answer};

    fn passed_on(line: &str) -> Result<String, HubControlError> {
        let mut out = Vec::new();
        transcode_answer(line, &mut serde_json::Serializer::new(&mut out))?;
        Ok(String::from_utf8(out).expect("utf-8"))
    }

    #[test]
    fn a_roster_written_by_the_hub_is_an_answer_and_is_passed_on_as_it_came() {
        let reply = crate::view::HubRosterReply {
            schema: crate::view::HUB_ROSTER_SCHEMA.into(),
            hub: "hub-1".into(),
            generated_at: flotilla_actors::model::Timestamp(1_765_000_000_000),
            hosts: Vec::new(),
        };
        let roster = serde_json::to_vec(&reply).expect("serialized");
        let line = [ROSTER_HEAD, &roster, ANSWER_TAIL].concat();
        let line = std::str::from_utf8(&line).expect("utf-8");
        let read: HubAnswer = serde_json::from_str(line).expect("an answer");
        assert!(matches!(read, HubAnswer::Roster(r) if r == reply));
        assert_eq!(passed_on(line).expect("passed on").as_bytes(), roster);
    }

    #[test]
    fn an_error_or_a_bad_answer_is_refused_with_what_was_wrong() {
        let refused = passed_on(r#"{"error":"the hub did not answer in time"}"#);
        assert!(
            matches!(&refused, Err(HubControlError::Refused(e)) if e.contains("in time")),
            "{refused:?}"
        );
        for bad in [
            "",
            "{}",
            r#"{"roster":{"a":1}"#,
            r#"{"roster":{},"error":"x"}"#,
            r#"{"other":1}"#,
            r#"{"roster":{}} trailing"#,
        ] {
            let read = passed_on(bad);
            assert!(
                matches!(read, Err(HubControlError::Decode(_))),
                "{bad:?}: {read:?}"
            );
        }
    }
}
