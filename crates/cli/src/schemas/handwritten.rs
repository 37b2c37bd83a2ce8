//! The schemas of the `--json` shapes the CLI builds with `json!` rather
//! than from a type (setup, certificates, hub administration, config,
//! diagnostics) and of the error envelope. Owns only these descriptions:
//! when a command's `json!` gains a field, add it here (the e2e test
//! `schemas` checks real output against them).

use schemars::{Schema, json_schema};
use serde_json::{Value, json};

/// The error envelope's file stem: it has no `schema` property (it is known
/// by its `error` key, docs/cli.md).
pub(super) const ERROR_ID: &str = "flotilla.error.v1";

/// An object whose `properties` are all required; more may come (fields
/// are only ever added).
fn object(description: &str, properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "description": description,
        "properties": properties, "required": required})
}

/// [`object`] with some properties that may be absent.
fn object_with_optional(description: &str, properties: Value, optional: &[&str]) -> Value {
    let mut value = object(description, properties);
    if let Some(list) = value["required"].as_array_mut() {
        list.retain(|k| !optional.iter().any(|o| k == o));
    }
    value
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn strings(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

fn count(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

fn nullable_string(description: &str) -> Value {
    json!({"type": ["string", "null"], "description": description})
}

/// A certificate as `hub init`, `certs` and `certs issue` show it.
fn certificate() -> Value {
    object(
        "A certificate.",
        json!({
            "name": string("The name it certifies."),
            "dns_names": strings("Its DNS subject alternative names."),
            "fingerprint": string("Its SHA-256 fingerprint."),
            "serial": {"description": "Its serial number."},
            "not_after": string("When it expires (RFC 3339)."),
            "days_left": {"type": "integer", "description": "Days until it expires."},
        }),
    )
}

/// A `certs` entry: none, a certificate, or why it cannot be read.
fn certs_entry(description: &str) -> Value {
    json!({"description": description, "anyOf": [
        {"type": "null"},
        certificate(),
        object("An unreadable file.", json!({"error": string("Why it cannot be read.")})),
    ]})
}

/// A hub or host seen over mDNS.
fn candidate() -> Value {
    object(
        "A hub or host announcing itself on the local network.",
        json!({
            "name": string("Its name."),
            "instance": string("Its mDNS instance."),
            "addrs": strings("Its addresses."),
            "port": count("Its port."),
            "ca_fingerprint": nullable_string("The CA it announces."),
            "version": nullable_string("Its version."),
            "matches_ca": {"type": ["boolean", "null"], "description": "Whether its CA is this home's."},
        }),
    )
}

fn top(description: &str, properties: Value) -> Schema {
    schema(object(description, properties))
}

fn schema(value: Value) -> Schema {
    Schema::try_from(value).unwrap_or_else(|_| json_schema!({}))
}

/// Every hand-written shape.
pub(super) fn all() -> Vec<(&'static str, Schema)> {
    let mut shapes = vec![
        (ERROR_ID, error()),
        ("flotilla.up.v1", top("`flotilla up --json`: the daemon runs.", json!({
            "started": boolean("Whether this call started it."),
            "restarted": boolean("Whether it replaced a daemon of another version."),
            "home": string("The home."),
            "status": {"type": "object", "description": "The daemon's `flotilla.host-status.v1` reply.",
                "properties": {"schema": {"const": "flotilla.host-status.v1"}}, "required": ["schema"]},
        }))),
        ("flotilla.down.v1", schema(object_with_optional("`flotilla down --json`.", json!({
            "stopped": boolean("Whether a daemon was stopped."),
            "was_running": boolean("Whether one was running."),
            "pid": count("The stopped daemon's process id."),
        }), &["pid"]))),
        ("flotilla.config.v1", top("`flotilla config show --json`: every key.", json!({
            "path": string("The config file."),
            "exists": boolean("Whether it exists."),
            "keys": {"type": "array", "items": object("One key.", json!({
                "key": string("The key (`hub_server.name`)."),
                "value": {"description": "Its value (`null` when unset)."},
                "source": {"enum": ["file", "default", "unset"]},
            }))},
        }))),
        ("flotilla.config.value.v1", top("`flotilla config get KEY --json`.", json!({
            "key": string("The key."),
            "value": {"description": "Its value."},
            "source": {"enum": ["file", "default"]},
        }))),
        ("flotilla.config.set.v1", top("`flotilla config set|unset KEY --json`.", json!({
            "path": string("The config file."),
            "key": string("The key."),
            "value": {"description": "Its value now (`null` when unset)."},
            "previous": {"description": "Its value before (`null` when unset)."},
        }))),
        ("flotilla.config.path.v1", top("`flotilla config path --json`.", json!({
            "path": string("The config file."),
            "exists": boolean("Whether it exists."),
        }))),
        ("flotilla.doctor.v1", top("`flotilla doctor --json`.", json!({
            "ok": boolean("Whether no check failed."),
            "home": string("The home."),
            "checks": {"type": "array", "items": object_with_optional("One check.", json!({
                "name": string("What was checked."),
                "status": {"enum": ["ok", "warn", "fail"]},
                "detail": string("What was found."),
                "hint": string("What to do."),
            }), &["hint"])},
        }))),
        ("flotilla.logs.v1", top("`flotilla logs --json` (without `--follow`).", json!({
            "file": string("The log file."),
            "lines": strings("Its last lines."),
        }))),
        ("flotilla.man.v1", top("`flotilla man --out DIR --json`.", json!({
            "dir": string("Where the pages were written."),
            "pages": strings("The pages written."),
        }))),
        ("flotilla.schemas.v1", top("`flotilla schemas --json`.", json!({
            "dir": nullable_string("Where the schemas were written (`null`: none written)."),
            "ids": strings("Every schema id."),
        }))),
        ("flotilla.lane-detached.v1", top("`lane run --json` left by a first Ctrl-C: the turn goes on.", json!({
            "lane": string("The lane."),
            "wait": string("The command that collects the result."),
        }))),
    ];
    shapes.extend(setup_shapes());
    shapes
}

/// The error envelope, on stdout with `--json` when a command fails.
fn error() -> Schema {
    schema(object(
        "The error envelope of any failing `--json` command (docs/cli.md).",
        json!({"error": object("What failed.", json!({
            "code": string("Stable error code (`not_found`, `usage`...)."),
            "exit": count("The process's exit code."),
            "message": string("What went wrong."),
            "hint": nullable_string("What to do."),
            "details": {"description": "More, by code (`null` when none)."},
        }))}),
    ))
}

/// Certificates, enrollment, the hub's administration and services.
fn setup_shapes() -> Vec<(&'static str, Schema)> {
    vec![
        ("flotilla.certs.v1", top("`flotilla certs --json`: this home's certificates.", json!({
            "certs_dir": string("The certificates' directory."),
            "ca": certs_entry("The CA (`has_key` when this home is the CA)."),
            "hub": certs_entry("The hub's certificate."),
            "host": certs_entry("The host's certificate."),
        }))),
        ("flotilla.certs-issue.v1", top("`flotilla certs issue NAME --json`.", json!({
            "name": string("The host."),
            "dir": string("Where the files were written."),
            "files": object("The files.", json!({
                "cert": string("The certificate."), "key": string("Its key."), "ca": string("The CA."),
            })),
            "certificate": certificate(),
            "ca_fingerprint": string("The CA's fingerprint."),
            "next": string("What to do next."),
        }))),
        ("flotilla.hub-init.v1", top("`flotilla hub init NAME --json`.", json!({
            "name": string("The hub's name."),
            "listen": string("The federation address."),
            "enroll_listen": string("The enrollment address."),
            "config": string("The config file."),
            "certs_dir": string("The certificates' directory."),
            "ca": certificate(),
            "hub": certificate(),
            "next": strings("What to do next."),
            "groups_file": string("The hub's group policy file."),
            "groups_default": string("What an unlisted group allows (`open`)."),
        }))),
        ("flotilla.hub-invite.v1", top("`flotilla hub invite HOST --json`.", json!({
            "host": string("The invited host."),
            "token": string("The single-use token (secret)."),
            "token_id": string("The token's id."),
            "expires_at": string("When it expires (RFC 3339)."),
            "hub_name": string("The hub's certificate name."),
            "hub_addrs": strings("The hub's federation addresses."),
            "enroll_addrs": strings("The hub's enrollment addresses."),
            "ca_fingerprint": string("The CA's fingerprint."),
            "next": string("What to do next."),
        }))),
        ("flotilla.hub-revoke.v1", top("`flotilla hub revoke HOST --json`.", json!({
            "host": string("The host."),
            "revoked": {"type": "array", "items": object("A revoked certificate.", json!({
                "serial": string("Its serial."), "fingerprint": string("Its fingerprint."),
            }))},
            "newly_revoked": count("How many were not revoked before."),
            "list": string("The revocation list's file."),
        }))),
        ("flotilla.hub-groups.v1", top("`flotilla hub groups [allow|deny...] --json`.", json!({
            "file": string("The hub's group policy file."),
            "groups": {"type": "array", "items": object("A listed group.", json!({
                "group": string("The group."), "allow": strings("Host patterns allowed."),
            }))},
            "unlisted": string("What an unlisted group allows (`open`)."),
            "changed": boolean("Whether this call changed the file."),
        }))),
        ("flotilla.host-join.v1", top("`flotilla host join TOKEN --json`.", json!({
            "host": string("This host."),
            "hub": string("The hub's address."),
            "hub_name": string("The hub's certificate name."),
            "ca_fingerprint": string("The CA's fingerprint."),
            "certificate": {"type": "object", "description": "The host's new certificate."},
            "certs_dir": string("The certificates' directory."),
            "config": string("The config file."),
            "next": string("What to do next."),
        }))),
        ("flotilla.discover.v1", top("`flotilla discover --json`.", json!({
            "timeout_ms": count("How long it listened."),
            "ca_fingerprint": nullable_string("This home's CA."),
            "hubs": {"type": "array", "items": candidate()},
            "hosts": {"type": "array", "items": candidate()},
        }))),
        ("flotilla.service.v1", schema(object_with_optional(
            "`flotilla service install|uninstall --json`.",
            json!({
                "action": {"enum": ["install", "uninstall"]},
                "dry_run": boolean("Whether nothing was changed."),
                "name": string("The unit's name."),
                "path": string("The unit file."),
                "contents": string("The unit (install)."),
                "next": strings("What to do next."),
                "notes": strings("Notes (install)."),
                "enabled": boolean("Whether it was enabled (install)."),
                "existed": boolean("Whether the file existed (uninstall)."),
            }),
            &["contents", "notes", "enabled", "existed"],
        ))),
        ("flotilla.integrations.v1", top("`flotilla integrations install|uninstall|status --json`.", json!({
            "action": {"enum": ["install", "uninstall", "status"]},
            "dry_run": boolean("Whether nothing was changed."),
            "clis": {"type": "array", "items": object("One CLI.", json!({
                "cli": string("The CLI."),
                "installed": boolean("Whether its integration is installed."),
                "files": {"type": "array", "items": object("One file.", json!({
                    "path": string("The file."),
                    "present": boolean("Whether it exists."),
                    "written_by_flotilla": boolean("Whether flotilla wrote it, unchanged."),
                    "change": nullable_string("What this call does to it."),
                }))},
            }))},
        }))),
    ]
}
