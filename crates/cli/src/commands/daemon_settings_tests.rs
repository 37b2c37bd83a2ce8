//! Tests of the daemon's recorded settings: what counts as a difference,
//! the flags' round trip, and `--save`.

use super::*;

fn given(hub: Option<&str>, lanes: Option<&[&str]>) -> Settings {
    Settings {
        hub: hub.map(str::to_owned),
        allow_remote_lanes: lanes.map(|l| l.iter().map(|s| s.to_string()).collect()),
        ..Settings::default()
    }
}

#[test]
fn only_flags_given_and_different_count() {
    let config = HostConfig::parse("hub = \"hub.a:7700\"\n").expect("config");
    let running = Settings::default().effective(&config);
    assert!(
        given(Some("hub.a:7700"), None)
            .differences(&running)
            .is_empty(),
        "same as config"
    );
    assert!(
        Settings::default().differences(&running).is_empty(),
        "nothing asked"
    );
    assert_eq!(
        given(Some("hub.b:7700"), Some(&["exec"])).differences(&running),
        [
            (
                "hub".to_owned(),
                "hub.b:7700".to_owned(),
                "hub.a:7700".to_owned()
            ),
            (
                "allow_remote_lanes".to_owned(),
                "exec".to_owned(),
                "not set".to_owned()
            ),
        ]
    );
}

#[test]
fn flags_round_trip_through_the_command_line() {
    let s = Settings {
        remote_lane_args: Some(true),
        remote_lane_max_permissions: Some("bypass".into()),
        ..given(Some("hub.a:7700"), Some(&["exec", "claude"]))
    };
    assert_eq!(
        s.to_flags(),
        [
            "--hub=hub.a:7700",
            "--allow-remote-lanes=exec,claude",
            "--remote-lane-max-permissions=bypass",
            "--remote-lane-args",
        ]
    );
}

#[test]
fn save_writes_each_given_flag_as_its_config_key() {
    let s = given(Some("hub.a:7700"), Some(&["exec", "claude"]));
    let text = s.save_into("# mine\n").expect("saved");
    let config = HostConfig::parse(&text).expect("valid");
    assert_eq!(config.hub.as_deref(), Some("hub.a:7700"));
    assert_eq!(config.allow_remote_lanes, ["exec", "claude"]);
    assert!(text.contains("# mine\n"), "{text}");
}
