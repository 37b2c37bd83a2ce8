//! What `host join` records in a host's `config.toml`: the hub it links
//! to (`hub`, `hub_name`, `hub_enroll`) and, when the file names no host,
//! `name`.
//!
//! Owns the edit: those top-level keys are replaced, every other line and
//! comment is kept, and the result must parse before it is written. The
//! keys' meanings are `crate::config`'s.

use std::path::Path;

use flotilla_actors::names::HostName;

use crate::config::{ConfigError, HostConfig};

/// The hub a joined host links to.
#[derive(Debug, Clone, Copy)]
pub struct HubLinkSettings<'a> {
    /// `hub`: the main address.
    pub addr: &'a str,
    /// `hub_name`: the name in the hub's certificate.
    pub name: &'a str,
    /// `hub_enroll`: the enrollment address.
    pub enroll: &'a str,
}

/// Records the hub a joined host links to: sets the top-level `hub`,
/// `hub_name` and `hub_enroll` (replacing earlier values, keeping every other line and
/// comment) and, when the file names no host, `name`.
pub fn write_hub_link(
    path: &Path,
    link: &HubLinkSettings<'_>,
    host: &HostName,
) -> Result<(), ConfigError> {
    let io_error = |source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    };
    let parse_error = |message| ConfigError::Parse {
        path: path.display().to_string(),
        message,
    };
    let current = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error(e)),
    };
    let config = HostConfig::parse(&current).map_err(parse_error)?;
    let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let mut text = format!(
        "hub = {}\nhub_name = {}\nhub_enroll = {}\n",
        quote(link.addr),
        quote(link.name),
        quote(link.enroll)
    );
    if config.name.is_none() {
        text.push_str(&format!("name = {}\n", quote(host.as_str())));
    }
    let mut top = true;
    for line in current.lines() {
        top &= !line.trim_start().starts_with('[');
        let key = line.split('=').next().unwrap_or_default().trim();
        if top && line.contains('=') && ["hub", "hub_name", "hub_enroll"].contains(&key) {
            continue;
        }
        text.push_str(line);
        text.push('\n');
    }
    HostConfig::parse(&text).map_err(parse_error)?;
    std::fs::write(path, text).map_err(io_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_the_hub_link_replaces_hub_keys_and_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# mine\nhub = \"old:1\"\nhub_ping_interval_ms = 100\n",
        )
        .expect("write");
        let host = HostName::new("laptop").expect("host");
        let link = HubLinkSettings {
            addr: "127.0.0.1:7700",
            name: "hub.test",
            enroll: "127.0.0.1:7701",
        };
        write_hub_link(&path, &link, &host).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("# mine") && !text.contains("old:1"), "{text}");
        let config = HostConfig::load(&path).expect("valid");
        assert_eq!(config.hub.as_deref(), Some("127.0.0.1:7700"));
        assert_eq!(config.hub_name.as_deref(), Some("hub.test"));
        assert_eq!(config.name, Some(host.clone()));
        assert_eq!(config.hub_ping_interval_ms, 100);
        let link = HubLinkSettings {
            addr: "127.0.0.1:7800",
            ..link
        };
        write_hub_link(&path, &link, &host).expect("again");
        let config = HostConfig::load(&path).expect("valid");
        assert_eq!(config.hub.as_deref(), Some("127.0.0.1:7800"));
        assert_eq!(config.hub_enroll_addr().as_deref(), Some("127.0.0.1:7701"));
        assert_eq!(
            HostConfig::parse("hub = \"h.test:9\"")
                .expect("valid")
                .hub_enroll_addr()
                .as_deref(),
            Some("h.test:10")
        );
    }
}
