//! The command line parsed as a user types it: each flag with a test.

use clap::CommandFactory;

use super::*;

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn send_splits_targets_on_commas() {
    let cli = Cli::try_parse_from([
        "flotilla", "send", "--as", "a", "--to", "b,c", "--to", "d", "hi",
    ])
    .expect("parse");
    let Command::Send(s) = cli.command else {
        panic!("send")
    };
    assert_eq!(s.to, ["b", "c", "d"]);
    assert_eq!(s.message.as_deref(), Some("hi"));
}

#[test]
fn json_and_home_are_global() {
    let cli = Cli::try_parse_from(["flotilla", "roster", "--json", "--home", "/x"]).expect("parse");
    assert!(cli.json);
    assert_eq!(cli.home.as_deref(), Some(std::path::Path::new("/x")));
}

#[test]
fn json_is_seen_anywhere_before_a_double_dash() {
    let line = |args: &[&str]| wants_json(args.iter().map(OsString::from));
    assert!(line(&["flotilla", "--json", "roster", "--bogus"]));
    assert!(line(&["flotilla", "lane", "run", "--cli", "x", "--json"]));
    assert!(!line(&["flotilla", "roster", "--bogus"]));
    assert!(!line(&["flotilla", "lane", "run", "--", "--json"]));
    assert!(!line(&["--json"]), "the program name is not an argument");
}

#[test]
fn discover_takes_a_duration_or_seconds() {
    let window = |args: &[&str]| {
        let cli = Cli::try_parse_from(args).expect("parse");
        let Command::Discover(d) = cli.command else {
            panic!("discover")
        };
        d.timeout
    };
    assert_eq!(window(&["flotilla", "discover"]).as_secs(), 3);
    let ms = window(&["flotilla", "discover", "--timeout", "500ms"]);
    assert_eq!(ms.as_millis(), 500);
    assert_eq!(
        window(&["flotilla", "discover", "--timeout", "2"]).as_secs(),
        2
    );
    for bad in ["0", "61s", "soon", "-1"] {
        assert!(
            Cli::try_parse_from(["flotilla", "discover", "--timeout", bad]).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn hub_invite_takes_a_ttl_and_repeated_addresses() {
    let cli = Cli::try_parse_from([
        "flotilla", "hub", "invite", "laptop", "--ttl", "1s", "--addr", "a", "--addr", "b:1",
    ])
    .expect("parse");
    let Command::Hub(HubCommand::Invite(a)) = cli.command else {
        panic!("invite")
    };
    assert_eq!(a.ttl, std::time::Duration::from_secs(1));
    assert_eq!(a.addrs, ["a", "b:1"]);
    let cli = Cli::try_parse_from(["flotilla", "hub", "invite", "laptop"]).expect("parse");
    let Command::Hub(HubCommand::Invite(a)) = cli.command else {
        panic!("invite")
    };
    assert_eq!(a.ttl, std::time::Duration::from_secs(3600));
}

#[test]
fn inbox_defaults() {
    let cli = Cli::try_parse_from(["flotilla", "inbox", "--as", "a"]).expect("parse");
    let Command::Inbox(i) = cli.command else {
        panic!("inbox")
    };
    assert!(!i.peek);
    assert_eq!(i.limit, 100);
    assert_eq!(i.wait, std::time::Duration::ZERO);
}

fn lane_start(args: &[&str]) -> LaneStartArgs {
    let line = [&["flotilla", "lane", "run", "--cli", "exec"][..], args].concat();
    let cli = Cli::try_parse_from(line).expect("parse");
    let Command::Lane(lane) = cli.command else {
        panic!("lane")
    };
    let LaneCommand::Run(a) = lane.command else {
        panic!("run")
    };
    a
}

#[test]
fn lane_durations_take_seconds_or_units_and_keep_whole_seconds() {
    assert_eq!(lane_start(&[]).timeout, None);
    assert_eq!(lane_start(&[]).auto_archive_after, 60);
    assert_eq!(lane_start(&["--timeout", "90"]).timeout, Some(90));
    assert_eq!(lane_start(&["--timeout", "1h30m"]).timeout, Some(5400));
    let a = lane_start(&["--auto-archive-after", "10m"]);
    assert_eq!(a.auto_archive_after, 600);
    for bad in ["1500ms", "soon", "-5"] {
        let flag = format!("--timeout={bad}");
        let line = ["flotilla", "lane", "run", "--cli", "exec", &flag];
        let err = Cli::try_parse_from(line).expect_err(bad);
        assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
    }
}

#[test]
fn lane_wait_takes_a_sub_second_timeout() {
    let timeout = |value: &str| {
        let cli = Cli::try_parse_from(["flotilla", "lane", "wait", "l", "--timeout", value])
            .expect("parse");
        let Command::Lane(lane) = cli.command else {
            panic!("lane")
        };
        let LaneCommand::Wait(w) = lane.command else {
            panic!("wait")
        };
        w.timeout
    };
    assert_eq!(
        timeout("500ms"),
        Some(std::time::Duration::from_millis(500))
    );
    assert_eq!(timeout("1.5"), Some(std::time::Duration::from_millis(1500)));
    assert_eq!(timeout("2m"), Some(std::time::Duration::from_secs(120)));
}

#[test]
fn inbox_waits_up_to_a_day() {
    let wait = |value: &str| {
        let cli = Cli::try_parse_from(["flotilla", "inbox", "--as", "a", "--wait", value])?;
        let Command::Inbox(i) = cli.command else {
            panic!("inbox")
        };
        Ok::<_, clap::Error>(i.wait)
    };
    assert_eq!(wait("5").ok(), Some(std::time::Duration::from_secs(5)));
    assert_eq!(wait("2m").ok(), Some(std::time::Duration::from_secs(120)));
    assert_eq!(
        wait("24h").ok(),
        Some(std::time::Duration::from_secs(86_400))
    );
    let err = wait("25h").expect_err("over a day");
    assert!(err.to_string().contains("out of range"), "{err}");
}

#[test]
fn hub_invite_ttl_also_takes_plain_seconds() {
    let cli =
        Cli::try_parse_from(["flotilla", "hub", "invite", "h", "--ttl", "600"]).expect("parse");
    let Command::Hub(HubCommand::Invite(a)) = cli.command else {
        panic!("invite")
    };
    assert_eq!(a.ttl, std::time::Duration::from_secs(600));
}
