//! Fuzzing `config.toml`: [`HostConfig::parse`] on whatever the file holds,
//! then every accessor the daemon calls on a config it accepted.

use proptest::prop_assert_eq;

use super::*;
use crate::enrollment::config_edit::{HubLinkSettings, write_hub_link};
use flotilla_actors::fuzzing::{Target, TestCaseError, fuzz, text};

/// Config files as they are really written: by hand (docs/config.md), by
/// `host join` and by `hub init`.
fn seeds() -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().expect("dir");
    let by_hand = "name = \"workstation\"\nmax_message_bytes = 4194304\nlane_stall_secs = 900.0\n\
                   allow_remote_lanes = [\"exec\", \"claude\"]\nremote_lane_roots = [\"/srv/lanes\"]\n\n\
                   [clis]\ncodex = \"/home/me/.local/bin/codex\"\n";
    let joined = dir.path().join("joined.toml");
    std::fs::write(&joined, "# my host\nadvertise = true\n").expect("write");
    let link = HubLinkSettings {
        addr: "hub.home.arpa:7700",
        name: "hub.home.arpa",
        enroll: "hub.home.arpa:7701",
    };
    let host = HostName::new("laptop").expect("host");
    write_hub_link(&joined, &link, &host).expect("join");
    let hub = dir.path().join("hub.toml");
    let mut server = HubServerConfig::new("hub.home.arpa".into(), "0.0.0.0:7700".into());
    server.host_cert_days = Some(30);
    write_hub_server(&hub, &server).expect("hub init");
    let read = |p: &Path| std::fs::read(p).expect("read");
    vec![by_hand.as_bytes().to_vec(), read(&joined), read(&hub)]
}

/// What the daemon and `hub run` ask of an accepted config.
fn use_config(config: &HostConfig) {
    let _ = (config.watchdog_interval(), config.watchdog_timeout());
    let _ = (config.lane_stall(), config.hub_reconnect());
    let _ = (config.hub_startup_retry(), config.hub_ping_interval());
    let _ = (config.hub_connect_timeout(), config.hub_enroll_addr());
    let _ = config.cli_program(flotilla_actors::lane::CliKind::Codex, "codex");
    if let Some(hub) = &config.hub_server {
        let _ = (hub.listen_addr(), hub.enroll_addr(), hub.host_validity());
    }
}

fn check(input: &[u8]) -> Result<(), TestCaseError> {
    let Ok(config) = HostConfig::parse(&text(input)) else {
        return Ok(());
    };
    use_config(&config);
    // What `hub init` does to an accepted file: write it back whole.
    let written = toml::to_string(&config).expect("an accepted config serializes");
    prop_assert_eq!(HostConfig::parse(&written), Ok(config));
    Ok(())
}

#[test]
fn fuzz_config_file() {
    let seeds = seeds();
    for seed in &seeds {
        let config = HostConfig::parse(&text(seed)).expect("every seed is a valid config");
        use_config(&config);
    }
    let target = Target {
        name: "config-file",
        seeds: &seeds,
        dictionary: &[
            b"\n",
            b"=",
            b"\"",
            b"'''",
            b"[",
            b"]",
            b"{",
            b"}",
            b"nan",
            b"inf",
            b"-inf",
            b"1e308",
            b"-1",
            b"18446744073709551615",
            b"0",
            b"lane_stall_secs = ",
            b"[hub_server]\n",
            b"hub = ",
            b"max_message_bytes = ",
            b"host_cert_days = ",
            b"1979-05-27T07:32:00Z",
        ],
    };
    fuzz(target, check);
}

/// Found by `fuzz_config_file` (issue 13): `lane_stall_secs = nan` was
/// accepted, and the daemon panicked when a lane turn asked for its stall
/// limit (`Duration::from_secs_f64(NaN)`).
#[test]
fn issue_13_a_nan_lane_stall_is_refused() {
    let err = HostConfig::parse("lane_stall_secs = nan").expect_err("nan");
    assert!(err.contains("lane_stall_secs"), "{err}");
    for (text, secs) in [("inf", 7.0 * 86_400.0), ("-inf", 0.1), ("0.0", 0.1)] {
        let config = HostConfig::parse(&format!("lane_stall_secs = {text}")).expect(text);
        assert_eq!(config.lane_stall(), Duration::from_secs_f64(secs), "{text}");
    }
    let config = HostConfig {
        lane_stall_secs: f64::NAN,
        ..HostConfig::default()
    };
    assert_eq!(config.lane_stall(), HostConfig::default().lane_stall());
}
