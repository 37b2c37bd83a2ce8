//! Tests of `config.toml`'s keys: listing, reading with defaults, and
//! edits that keep the file's comments and are checked before they count.

use super::*;

const FILE: &str = "# my laptop\nname = \"laptop\" # the short one\n\n[hub_server]\nname = \"hub.example\"\nlisten = \"0.0.0.0:7700\"\n";

#[test]
fn every_key_of_the_config_types_is_known() {
    let keys = known_keys();
    for key in [
        "name",
        "max_message_bytes",
        "outbox_max_messages",
        "hub",
        "hub_server.listen",
        "hub_server.queue_ttl_secs",
    ] {
        assert!(keys.contains(&key.to_owned()), "{key} in {keys:?}");
    }
}

#[test]
fn an_unknown_key_names_the_closest_one() {
    let err = check_key("max_mesage_bytes").expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "config.toml has no key `max_mesage_bytes`; did you mean `max_message_bytes`?"
    );
    assert!(check_key("hub_server").is_err(), "a table is not a key");
    assert!(
        check_key("zzz")
            .expect_err("unknown")
            .to_string()
            .contains("config show")
    );
}

#[test]
fn get_gives_the_files_value_or_the_default_and_says_which() {
    assert_eq!(
        get(FILE, "name").expect("name"),
        (Some(toml::Value::String("laptop".into())), true)
    );
    assert_eq!(
        get(FILE, "max_message_bytes").expect("default"),
        (Some(toml::Value::Integer(1_048_576)), false)
    );
    assert_eq!(get(FILE, "hub").expect("unset"), (None, false));
    assert!(get(FILE, "hub_server.listen").expect("nested").1);
}

#[test]
fn set_keeps_comments_and_layout_and_infers_the_type() {
    let edited = set(FILE, "max_message_bytes", "4096").expect("number");
    assert!(
        edited.starts_with("# my laptop\nname = \"laptop\" # the short one\n"),
        "{edited}"
    );
    assert!(edited.contains("max_message_bytes = 4096"), "{edited}");
    let edited = set(&edited, "hub", "hub.example:7700").expect("bare text is text");
    assert!(edited.contains("hub = \"hub.example:7700\""), "{edited}");
    let edited = set(&edited, "name", "1234").expect("a name wants text");
    assert!(edited.contains("name = \"1234\""), "{edited}");
    let edited = set(&edited, "hub_server.queue_ttl_secs", "60").expect("nested");
    assert_eq!(
        HostConfig::parse(&edited)
            .expect("valid")
            .hub_server
            .expect("hub")
            .queue_ttl_secs,
        60
    );
    let edited = set(&edited, "allow_remote_lanes", "[\"exec\", \"claude\"]").expect("array");
    assert_eq!(
        HostConfig::parse(&edited)
            .expect("valid")
            .allow_remote_lanes,
        ["exec", "claude"]
    );
}

#[test]
fn set_refuses_a_value_the_daemon_would_refuse_and_changes_nothing() {
    let err = set(FILE, "max_message_bytes", "0").expect_err("zero");
    assert!(matches!(err, KeyError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("max_message_bytes"), "{err}");
    let err = set(FILE, "lane_stall_secs", "soon").expect_err("not a number");
    assert!(err.to_string().contains("lane_stall_secs"), "{err}");
}

#[test]
fn unset_brings_the_default_back() {
    let edited = unset(FILE, "name").expect("unset");
    assert!(!edited.contains("name = \"laptop\""), "{edited}");
    assert!(
        edited.contains("[hub_server]\nname = \"hub.example\""),
        "{edited}"
    );
    assert_eq!(get(&edited, "name").expect("name"), (None, false));
}

#[test]
fn values_gives_every_key_once_with_its_source() {
    let all = values(FILE).expect("values");
    assert_eq!(
        all.len(),
        known_keys().len() - 1,
        "every key but the hub_server table"
    );
    let find = |k: &str| all.iter().find(|(key, _, _)| key == k).cloned().expect(k);
    assert_eq!(
        find("name"),
        (
            "name".into(),
            Some(toml::Value::String("laptop".into())),
            true
        )
    );
    assert!(!find("max_message_bytes").2, "a default");
    assert_eq!(find("hub").1, None);
}
