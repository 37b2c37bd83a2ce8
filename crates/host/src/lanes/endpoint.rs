//! Is a lane's model endpoint reachable? Before the stall watchdog spends
//! a restart on an agent CLI, it checks the network the way the CLI would
//! use it: a TCP connection to the host and port of the CLI's API base URL
//! (the lane's `--env` first, then the daemon's environment, then the
//! vendor's default). While it is unreachable the watchdog waits instead
//! (a restart would only stall again). CLIs whose endpoint lives in their
//! own configuration files (pi, opencode) and exec lanes are not checked.
//! This module only answers the question; the watchdog decides.

use std::time::Duration;

use flotilla_actors::lane::{CliKind, LaneSpec};

/// How long one connection attempt may take.
const PROBE: Duration = Duration::from_secs(1);

/// Where a CLI's model calls go, by environment variable or default.
fn source(cli: CliKind) -> Option<(&'static str, &'static str)> {
    match cli {
        CliKind::Claude => Some(("ANTHROPIC_BASE_URL", "https://api.anthropic.com")),
        CliKind::Codex => Some(("OPENAI_BASE_URL", "https://api.openai.com")),
        CliKind::Gemini => Some((
            "GOOGLE_GEMINI_BASE_URL",
            "https://generativelanguage.googleapis.com",
        )),
        CliKind::Grok => Some(("GROK_BASE_URL", "https://api.x.ai")),
        _ => None,
    }
}

/// The `host:port` the lane's CLI calls, if it is known.
pub(crate) fn of(spec: &LaneSpec, daemon_env: impl Fn(&str) -> Option<String>) -> Option<String> {
    of_cli(spec.cli, &spec.env, daemon_env)
}

/// The `host:port` a lane of `cli` with `env` (its `--env`) calls.
pub(crate) fn of_cli(
    cli: CliKind,
    env: &[(String, String)],
    daemon_env: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    let (var, default) = source(cli)?;
    let url = env
        .iter()
        .find(|(k, _)| k == var)
        .map(|(_, v)| v.clone())
        .or_else(|| daemon_env(var))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_owned());
    authority(&url)
}

/// `host:port` of an `http(s)://` URL (the scheme's port when none is
/// written).
pub(crate) fn authority(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let port = match scheme {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let auth = rest.split(['/', '?', '#']).next()?;
    let auth = auth.rsplit_once('@').map_or(auth, |(_, a)| a);
    if auth.is_empty() {
        return None;
    }
    let has_port = match auth.rsplit_once(':') {
        Some((host, p)) => !host.ends_with(':') && p.parse::<u16>().is_ok(),
        None => false,
    };
    Some(
        if has_port && (!auth.starts_with('[') || auth.contains("]:")) {
            auth.to_owned()
        } else {
            format!("{auth}:{port}")
        },
    )
}

/// Whether a TCP connection to `endpoint` opens within [`PROBE`].
pub(crate) async fn reachable(endpoint: &str) -> bool {
    matches!(
        tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(endpoint)).await,
        Ok(Ok(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authority_of_a_base_url() {
        assert_eq!(
            authority("https://api.anthropic.com").as_deref(),
            Some("api.anthropic.com:443")
        );
        assert_eq!(
            authority("http://127.0.0.1:8080/v1").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(authority("http://[::1]:9/v1").as_deref(), Some("[::1]:9"));
        assert_eq!(authority("http://[::1]/v1").as_deref(), Some("[::1]:80"));
        assert_eq!(
            authority("https://u:p@h.example/x").as_deref(),
            Some("h.example:443")
        );
        assert_eq!(authority("ftp://h"), None);
        assert_eq!(authority("https://"), None);
    }

    #[test]
    fn the_lanes_env_comes_before_the_daemons() {
        let mut spec = LaneSpec {
            name: flotilla_actors::names::PeerName::new("w").expect("name"),
            cli: CliKind::Claude,
            cwd: "/".into(),
            model: None,
            permissions: flotilla_actors::lane::Permissions::Default,
            timeout_secs: None,
            persistent: false,
            auto_archive_secs: None,
            groups: vec![],
            inherit_groups: false,
            owner: flotilla_actors::names::PeerId::parse("h/o").expect("owner"),
            env: vec![],
            args: vec![],
            restart_on_stall: false,
        };
        let daemon = |k: &str| (k == "ANTHROPIC_BASE_URL").then(|| "http://127.0.0.1:1".to_owned());
        assert_eq!(of(&spec, daemon).as_deref(), Some("127.0.0.1:1"));
        spec.env
            .push(("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:2".into()));
        assert_eq!(of(&spec, daemon).as_deref(), Some("127.0.0.1:2"));
        assert_eq!(of(&spec, |_| None).as_deref(), Some("127.0.0.1:2"));
        spec.cli = CliKind::Exec;
        assert_eq!(of(&spec, daemon), None);
    }
}
