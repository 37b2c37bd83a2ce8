//! JSON Schema descriptions (schemars) of the types that serialize by hand:
//! names, peer ids and timestamps are strings in JSON. Owns only these
//! `JsonSchema` impls; it must not change how anything serializes (the
//! serde impls stay in `names` and `model`).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::model::Timestamp;
use crate::names::{GroupName, HostName, MessageId, PeerId, PeerName};

macro_rules! string_schema {
    ($($ty:ty => $name:literal, $description:literal;)*) => {$(
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                $name.into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({"type": "string", "description": $description})
            }
        }
    )*};
}

string_schema! {
    HostName => "HostName", "A host's name (letters, digits, `-`, `_`, `.`).";
    PeerName => "PeerName", "A peer's name on its host.";
    GroupName => "GroupName", "A group's name; `session:HOST/NAME` is a peer's private group.";
    MessageId => "MessageId", "A message id, chosen by the sender (a retry reuses it).";
}

impl JsonSchema for PeerId {
    fn schema_name() -> Cow<'static, str> {
        "PeerId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A peer's identity across the federation: `HOST/NAME`.",
            "pattern": "^[^/]+/[^/]+$"
        })
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "An RFC 3339 UTC time with milliseconds (`2026-11-30T06:00:00.000Z`)."
        })
    }
}
