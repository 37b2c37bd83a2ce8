//! `flotilla schemas [--out DIR]` (hidden): the JSON Schema of every
//! `--json` shape, one file per schema id (`flotilla.roster.v1.json`...),
//! shipped in docs/schemas/. Shapes that are Rust types are derived from
//! those types (schemars), so they follow the code; shapes the CLI builds
//! with `json!` are described by hand in [`handwritten`].
//!
//! Owns the catalog of schema ids and the files' layout; it must not change
//! any shape (the commands own their output).

mod handwritten;
mod handwritten_setup;
#[cfg(test)]
mod tests;

use std::path::Path;

use anyhow::{Context, Result};
use flotilla_actors::lane::events::LaneEvent;
use flotilla_actors::protocol::{
    BoardReply, ClaimReply, FleetCheckReply, FleetHistoryReply, FleetListReply, FleetRequestReply,
    FleetView, GateReply, HostStatusReply, InboxReply, LaneAttachReply, LaneDoctorReply,
    LaneListReply, LanePruneReply, LaneRemoveReply, LaneStartReply, LaneView, OutboxReply,
    PeerLeaveReply, PeerView, PeersReply, PolicyReply, ReadyReply, RosterReply, SendReply,
};
use flotilla_hub::view::HubRosterReply;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use crate::exit::OK;
use crate::output::{self, outln};

/// One `--json` shape: its schema id and its schema.
pub(crate) struct Shape {
    /// The schema id (`flotilla.roster.v1`), also the file's stem.
    pub(crate) id: &'static str,
    /// The finished schema (`$id`, `title`, the `schema` property).
    pub(crate) schema: Value,
}

impl Shape {
    /// The file name under docs/schemas/.
    pub(crate) fn file_name(&self) -> String {
        format!("{}.json", self.id)
    }

    /// The file's text: pretty JSON and a final newline.
    pub(crate) fn text(&self) -> Result<String> {
        Ok(format!("{}\n", serde_json::to_string_pretty(&self.schema)?))
    }
}

/// The schema of `T`, generated in draft 2020-12.
pub(crate) fn derived<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// Every shape, sorted by id.
pub(crate) fn catalog() -> Vec<Shape> {
    let mut raw: Vec<(&'static str, Schema)> = vec![
        ("flotilla.host-status.v1", derived::<HostStatusReply>()),
        ("flotilla.roster.v1", derived::<RosterReply>()),
        ("flotilla.peers.v1", derived::<PeersReply>()),
        ("flotilla.peer.v1", derived::<PeerView>()),
        ("flotilla.peer-leave.v1", derived::<PeerLeaveReply>()),
        ("flotilla.send.v1", derived::<SendReply>()),
        ("flotilla.inbox.v1", derived::<InboxReply>()),
        ("flotilla.outbox.v1", derived::<OutboxReply>()),
        ("flotilla.lane.v1", derived::<LaneEvent>()),
        ("flotilla.lane-start.v1", derived::<LaneStartReply>()),
        ("flotilla.lane-status.v1", derived::<LaneView>()),
        ("flotilla.lanes.v1", derived::<LaneListReply>()),
        ("flotilla.lane-doctor.v1", derived::<LaneDoctorReply>()),
        ("flotilla.lane-attach.v1", derived::<LaneAttachReply>()),
        ("flotilla.lane-remove.v1", derived::<LaneRemoveReply>()),
        ("flotilla.lane-prune.v1", derived::<LanePruneReply>()),
        ("flotilla.fleet-check.v1", derived::<FleetCheckReply>()),
        ("flotilla.ready.v1", derived::<ReadyReply>()),
        ("flotilla.fleet.v1", derived::<FleetView>()),
        ("flotilla.fleets.v1", derived::<FleetListReply>()),
        ("flotilla.fleet-request.v1", derived::<FleetRequestReply>()),
        (
            "flotilla.fleet-remove.v1",
            derived::<flotilla_actors::protocol::FleetRemoveReply>(),
        ),
        ("flotilla.fleet-history.v1", derived::<FleetHistoryReply>()),
        (
            "flotilla.fleet-decision.v1",
            derived::<flotilla_actors::fleet::run::Decision>(),
        ),
        (
            "flotilla.fleet-member-event.v1",
            derived::<crate::commands::MemberEvent>(),
        ),
        (
            "flotilla.fleet-room.v1",
            derived::<crate::commands::RoomReply>(),
        ),
        (
            "flotilla.fleet-pairs.v1",
            derived::<crate::commands::PairsReply>(),
        ),
        ("flotilla.hub-roster.v1", derived::<HubRosterReply>()),
        ("flotilla.claim.v1", derived::<ClaimReply>()),
        ("flotilla.board.v1", derived::<BoardReply>()),
        ("flotilla.gate.v1", derived::<GateReply>()),
        ("flotilla.policy.v1", derived::<PolicyReply>()),
        ("flotilla.bench.local.v1", crate::bench::local_schema()),
        (
            "flotilla.bench.lanes.v1",
            derived::<crate::bench_lanes::LaneFigures>(),
        ),
        (
            "flotilla.bench.fleet.v1",
            derived::<crate::bench_fleet::FleetFigures>(),
        ),
        (
            "flotilla.bench.federation.v1",
            derived::<crate::bench_federation::FederationFigures>(),
        ),
    ];
    add_cli_fields(&mut raw);
    raw.extend(handwritten::all());
    let mut shapes: Vec<Shape> = raw
        .into_iter()
        .map(|(id, schema)| Shape {
            id,
            schema: finish(id, schema),
        })
        .collect();
    shapes.sort_by(|a, b| a.id.cmp(b.id));
    shapes
}

/// Fields the CLI adds to a daemon's reply when it prints it.
fn add_cli_fields(raw: &mut [(&'static str, Schema)]) {
    for (id, schema) in raw.iter_mut() {
        if *id != "flotilla.inbox.v1" {
            continue;
        }
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert(
                "acknowledged".into(),
                json!({"type": "boolean", "description": "Whether these messages were acknowledged (not with `--peek`)."}),
            );
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.push(json!("acknowledged"));
        }
    }
}

/// Sets `$id` and `title` to the schema id and pins the `schema` property
/// to it (every shape carries its id), except on the error envelope, which
/// is known by its `error` key.
fn finish(id: &str, schema: Schema) -> Value {
    let mut value = schema.to_value();
    let Some(object) = value.as_object_mut() else {
        return value;
    };
    let mut finished = serde_json::Map::new();
    let dialect = object.remove("$schema").unwrap_or(json!(DIALECT));
    finished.insert("$schema".into(), dialect);
    finished.insert("$id".into(), json!(id));
    finished.insert("title".into(), json!(id));
    object.remove("$id");
    object.remove("title");
    if id != handwritten::ERROR_ID {
        pin_schema_property(id, object);
    }
    finished.extend(std::mem::take(object));
    Value::Object(finished)
}

/// The JSON Schema dialect of every file.
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// `properties.schema` becomes `{"const": id}` and is required.
fn pin_schema_property(id: &str, object: &mut serde_json::Map<String, Value>) {
    let pinned = json!({"description": "The schema id of this shape.", "const": id});
    let properties = object.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        let mut ordered = serde_json::Map::new();
        ordered.insert("schema".into(), pinned);
        ordered.extend(
            std::mem::take(properties)
                .into_iter()
                .filter(|(k, _)| k != "schema"),
        );
        *properties = ordered;
    }
    let required = object.entry("required").or_insert_with(|| json!([]));
    if let Some(list) = required.as_array_mut()
        && !list.iter().any(|k| k == "schema")
    {
        list.insert(0, json!("schema"));
    }
}

/// `flotilla schemas`: prints the ids, or writes every file into `dir`.
pub(crate) fn run(dir: Option<&Path>, json: bool) -> Result<u8> {
    let shapes = catalog();
    let Some(dir) = dir else {
        if json {
            let ids: Vec<&str> = shapes.iter().map(|s| s.id).collect();
            output::json(&json!({"schema": "flotilla.schemas.v1", "dir": null, "ids": ids}))?;
        } else {
            for shape in &shapes {
                outln!("{}", shape.id)?;
            }
        }
        return Ok(OK);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for shape in &shapes {
        let path = dir.join(shape.file_name());
        std::fs::write(&path, shape.text()?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        let ids: Vec<&str> = shapes.iter().map(|s| s.id).collect();
        output::json(&json!({"schema": "flotilla.schemas.v1", "dir": dir, "ids": ids}))?;
    } else {
        outln!("wrote {} schemas to {}", shapes.len(), dir.display())?;
    }
    Ok(OK)
}
