use super::*;

#[test]
fn defaults_and_overrides() {
    assert_eq!(HostConfig::parse("").expect("empty"), HostConfig::default());
    let c = HostConfig::parse("name = \"ws\"\nmax_message_bytes = 10\n").expect("valid");
    assert_eq!(c.name.expect("name").as_str(), "ws");
    assert_eq!(c.max_message_bytes, 10);
}

#[test]
fn the_hubs_verdict_is_awaited_at_most_an_hour_whatever_the_setting() {
    let c = HostConfig::parse("hub_verdict_wait_ms = 9223372036854775807").expect("valid");
    assert_eq!(c.hub_verdict_wait(), Duration::from_secs(3600));
    let deadline = tokio::time::Instant::now().checked_add(c.hub_verdict_wait());
    assert!(deadline.is_some(), "a deadline that does not overflow");
    let c = HostConfig::parse("hub_verdict_wait_ms = 0").expect("valid");
    assert_eq!(c.hub_verdict_wait(), Duration::ZERO, "0: answer at once");
}

#[test]
fn unknown_keys_and_bad_values_are_named() {
    let err = HostConfig::parse("nmae = \"x\"").expect_err("typo");
    assert!(err.contains("nmae"), "{err}");
    let err = HostConfig::parse("name = \"bad name\"").expect_err("bad name");
    assert!(err.contains("invalid host name"), "{err}");
    assert!(HostConfig::parse("max_message_bytes = 0").is_err());
    assert!(HostConfig::parse("outbox_max_messages = 0").is_err());
    assert!(HostConfig::parse("outbox_max_bytes = 0").is_err());
}

/// Issue 13, point 7: `queue_ttl_secs = 0` was accepted.
#[test]
fn context_windows_are_positive_token_counts_named_when_not() {
    let c = HostConfig::parse("[context_windows]\n\"my-local-model\" = 32768\n").expect("valid");
    assert_eq!(
        c.context_windows
            .window(flotilla_actors::lane::CliKind::Qwen, Some("my-local-model")),
        32_768
    );
    for bad in ["0", "-5", "\"big\"", "1.5"] {
        let err = HostConfig::parse(&format!("[context_windows]\n\"my-model\" = {bad}\n"))
            .expect_err(bad);
        assert!(err.contains("my-model"), "{bad}: {err}");
    }
}

#[test]
fn a_hub_queue_ttl_of_zero_is_refused() {
    let hub = |ttl: &str| format!("[hub_server]\nname = \"h\"\nlisten = \"127.0.0.1:7700\"\n{ttl}");
    assert!(HostConfig::parse(&hub("")).is_ok());
    assert!(HostConfig::parse(&hub("queue_ttl_secs = 60\n")).is_ok());
    let err = HostConfig::parse(&hub("queue_ttl_secs = 0\n")).expect_err("zero");
    assert!(err.contains("queue_ttl_secs"), "{err}");
    // Issue 13, point 4: a zero bound would cut every link, or every host.
    for key in [
        "link_queue_bytes",
        "forget_hosts_after_secs",
        "host_frames_per_sec",
        "host_bytes_per_sec",
    ] {
        assert!(
            HostConfig::parse(&hub(&format!("{key} = 5\n"))).is_ok(),
            "{key}"
        );
        let err = HostConfig::parse(&hub(&format!("{key} = 0\n"))).expect_err(key);
        assert!(err.contains(key) && err.contains("at least 1"), "{err}");
    }
}

#[test]
fn a_hub_web_roster_on_a_public_address_is_refused() {
    let hub = |web: &str| {
        format!("[hub_server]\nname = \"h\"\nlisten = \"0.0.0.0:7700\"\nweb = \"{web}\"\n")
    };
    let config = HostConfig::parse(&hub("127.0.0.1:7780")).expect("loopback");
    assert_eq!(
        config.hub_server.and_then(|s| s.web).as_deref(),
        Some("127.0.0.1:7780")
    );
    for public in ["0.0.0.0:7780", "192.0.2.1:80", "[::]:7780", "nonsense"] {
        let err = HostConfig::parse(&hub(public)).expect_err(public);
        assert!(err.contains("[hub_server] web"), "{err}");
    }
    let err = HostConfig::parse(&hub("0.0.0.0:7780")).expect_err("public");
    assert!(err.contains("needs TLS"), "{err}");
}

#[test]
fn the_hub_target_needs_a_port_and_a_name() {
    let c = HostConfig::parse("hub = \"hub.home.arpa:7700\"").expect("dns");
    let target = c.hub_target().expect("valid").expect("a hub");
    assert_eq!(target.name, "hub.home.arpa");
    let c = HostConfig::parse("hub = \"127.0.0.1:7700\"\nhub_name = \"hub.test\"").expect("ip");
    assert_eq!(
        c.hub_target().expect("valid").expect("a hub").name,
        "hub.test"
    );
    let err = HostConfig::parse("hub = \"127.0.0.1:7700\"").expect_err("no name");
    assert!(err.contains("hub_name"), "{err}");
    let err = HostConfig::parse("hub = \"hub.home.arpa\"").expect_err("no port");
    assert!(err.contains("needs a port"), "{err}");
    assert_eq!(HostConfig::default().hub_target(), Ok(None));
}

#[test]
fn the_hub_server_table_is_read() {
    let c = HostConfig::parse("[hub_server]\nname = \"hub.test\"\nlisten = \"0.0.0.0:7700\"\n")
        .expect("hub server");
    assert_eq!(c.hub_server.expect("table").listen, "0.0.0.0:7700");
}

#[test]
fn the_enrollment_address_defaults_to_the_next_port() {
    let mut hub = HubServerConfig::new("hub.test".into(), "127.0.0.1:7700".into());
    assert_eq!(
        hub.enroll_addr().expect("addr").to_string(),
        "127.0.0.1:7701"
    );
    hub.enroll_listen = Some("0.0.0.0:9".into());
    assert_eq!(hub.enroll_addr().expect("addr").to_string(), "0.0.0.0:9");
    hub.listen = "127.0.0.1:65535".into();
    hub.enroll_listen = None;
    assert!(hub.enroll_addr().is_err());
}

#[test]
fn writing_the_hub_server_keeps_the_rest_and_replaces_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "# mine\nname = \"ws\"").expect("write");
    let mut hub = HubServerConfig::new("hub.test".into(), "0.0.0.0:7700".into());
    hub.enroll_listen = Some("0.0.0.0:7701".into());
    write_hub_server(&path, &hub).expect("append");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with("# mine\n"), "{text}");
    hub.listen = "127.0.0.1:1".into();
    write_hub_server(&path, &hub).expect("replace");
    let config = HostConfig::load(&path).expect("valid");
    assert_eq!(config.hub_server, Some(hub));
    assert_eq!(config.name.expect("kept").as_str(), "ws");
    assert!(!text.contains("advertise"), "the default is not written");
}

#[test]
fn the_hub_advertises_unless_told_not_to() {
    let table = "[hub_server]\nname = \"hub.test\"\nlisten = \"0.0.0.0:7700\"\n";
    let c = HostConfig::parse(table).expect("default");
    assert!(c.hub_server.expect("table").advertise);
    let c = HostConfig::parse(&format!("{table}advertise = false\n")).expect("off");
    assert!(!c.hub_server.expect("table").advertise);
}

#[test]
fn hub_auto_needs_no_port_and_no_name() {
    let c = HostConfig::parse("hub = \"auto\"").expect("auto");
    let target = c.hub_target().expect("valid").expect("a hub");
    assert!(target.is_auto());
    assert_eq!(target.name, "");
    let c = HostConfig::parse("hub = \"auto\"\nhub_name = \"hub.test\"").expect("named");
    assert_eq!(
        c.hub_target().expect("valid").expect("hub").name,
        "hub.test"
    );
}
