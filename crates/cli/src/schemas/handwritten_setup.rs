//! The hand-written schemas of the setup and federation administration
//! shapes (certificates, `hub init|invite|revoke|groups`, `host join`,
//! `discover`, `host install|uninstall`, `integrations`). Owns only these
//! descriptions; the building blocks are in `handwritten`.

use schemars::Schema;
use serde_json::{Value, json};

use super::handwritten::{
    boolean, count, nullable_string, object, object_with_optional, schema, string, strings, top,
};

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

/// Certificates, enrollment, the hub's administration and services.
pub(super) fn all() -> Vec<(&'static str, Schema)> {
    vec![
        (
            "flotilla.certs.v1",
            top(
                "`flotilla certs --json`: this home's certificates.",
                json!({
                    "certs_dir": string("The certificates' directory."),
                    "ca": certs_entry("The CA (`has_key` when this home is the CA)."),
                    "hub": certs_entry("The hub's certificate."),
                    "host": certs_entry("The host's certificate."),
                }),
            ),
        ),
        (
            "flotilla.certs-issue.v1",
            top(
                "`flotilla certs issue NAME --json`.",
                json!({
                    "name": string("The host."),
                    "dir": string("Where the files were written."),
                    "files": object("The files.", json!({
                        "cert": string("The certificate."), "key": string("Its key."), "ca": string("The CA."),
                    })),
                    "certificate": certificate(),
                    "ca_fingerprint": string("The CA's fingerprint."),
                    "next": string("What to do next."),
                }),
            ),
        ),
        (
            "flotilla.hub-init.v1",
            top(
                "`flotilla hub init NAME --json`.",
                json!({
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
                }),
            ),
        ),
        (
            "flotilla.hub-web.v1",
            top(
                "`flotilla hub web --json`: one line once it serves.",
                json!({
                    "url": string("The web roster's URL, its token in the fragment (secret)."),
                    "listen": string("The address it serves on."),
                }),
            ),
        ),
        (
            "flotilla.hub-invite.v1",
            schema(object_with_optional(
                "`flotilla hub invite HOST --json`.",
                json!({
                    "host": string("The invited host."),
                    "token": string("The single-use token (secret)."),
                    "token_id": string("The token's id."),
                    "expires_at": string("When it expires (RFC 3339)."),
                    "hub_name": string("The hub's certificate name."),
                    "hub_addrs": strings("The hub's federation addresses."),
                    "enroll_addrs": strings("The hub's enrollment addresses."),
                    "ca_fingerprint": string("The CA's fingerprint."),
                    "next": string("What to do next."),
                    "reachability": {"type": "array", "description":
                        "Whether the hub answered at each address pair, dialled from here as `host join` \
                         would (absent with --no-check).",
                        "items": object_with_optional("One address pair.", json!({
                            "addr": string("The hub's address (`hub_addrs`)."),
                            "enroll_addr": string("The enrollment address dialled (`enroll_addrs`)."),
                            "reachable": boolean("Whether the hub answered there within 3 s."),
                            "error": string("Why not, and what to do (only when not reachable)."),
                        }), &["error"])},
                }),
                &["reachability"],
            )),
        ),
        (
            "flotilla.hub-revoke.v1",
            top(
                "`flotilla hub revoke HOST --json`.",
                json!({
                    "host": string("The host."),
                    "revoked": {"type": "array", "items": object("A revoked certificate.", json!({
                        "serial": string("Its serial."), "fingerprint": string("Its fingerprint."),
                    }))},
                    "newly_revoked": count("How many were not revoked before."),
                    "list": string("The revocation list's file."),
                }),
            ),
        ),
        (
            "flotilla.hub-groups.v1",
            top(
                "`flotilla hub groups [allow|deny...] --json`.",
                json!({
                    "file": string("The hub's group policy file."),
                    "groups": {"type": "array", "items": object("A listed group.", json!({
                        "group": string("The group."), "allow": strings("Host patterns allowed."),
                    }))},
                    "unlisted": string("What an unlisted group allows (`open`)."),
                    "changed": boolean("Whether this call changed the file."),
                }),
            ),
        ),
        (
            "flotilla.host-join.v1",
            top(
                "`flotilla host join TOKEN --json`.",
                json!({
                    "host": string("This host."),
                    "hub": string("The hub's address."),
                    "hub_name": string("The hub's certificate name."),
                    "ca_fingerprint": string("The CA's fingerprint."),
                    "certificate": {"type": "object", "description": "The host's new certificate."},
                    "certs_dir": string("The certificates' directory."),
                    "config": string("The config file."),
                    "next": string("What to do next."),
                }),
            ),
        ),
        (
            "flotilla.discover.v1",
            top(
                "`flotilla discover --json`.",
                json!({
                    "timeout_ms": count("How long it listened."),
                    "ca_fingerprint": nullable_string("This home's CA."),
                    "hubs": {"type": "array", "items": candidate()},
                    "hosts": {"type": "array", "items": candidate()},
                }),
            ),
        ),
        (
            "flotilla.service.v1",
            schema(object_with_optional(
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
            )),
        ),
        (
            "flotilla.integrations.v1",
            top(
                "`flotilla integrations install|uninstall|status --json`.",
                json!({
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
                }),
            ),
        ),
    ]
}
