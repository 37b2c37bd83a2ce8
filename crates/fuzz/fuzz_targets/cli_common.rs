//! What a lane's CLI prints, read by its connector's parser, line by line,
//! then the turn's end: shared by the `cli_*` targets, one per CLI. An
//! outcome fails exactly when it has an error, and exit code 1 always
//! fails.

pub use flotilla_actors::lane::CliKind;
use flotilla_actors::lane::{LaneSpec, Permissions};
use flotilla_actors::names::{PeerId, PeerName};
use flotilla_host::lanes::cli::connector;

fn spec(cli: CliKind) -> LaneSpec {
    let nowhere = "/nonexistent/flotilla-fuzz".to_owned();
    LaneSpec {
        name: PeerName::new("worker").expect("name"),
        cli,
        cwd: "/tmp/wd".into(),
        model: Some("model-x".into()),
        permissions: Permissions::Workspace,
        timeout_secs: None,
        persistent: false,
        auto_archive_secs: None,
        groups: Vec::new(),
        inherit_groups: false,
        owner: "h/operator".parse::<PeerId>().expect("owner"),
        env: vec![
            ("HOME".into(), nowhere.clone()),
            ("CODEX_HOME".into(), nowhere),
        ],
        args: Vec::new(),
        restart_on_stall: false,
    }
}

pub fn check(kind: CliKind, output: &[u8]) {
    let Some(connector) = connector(kind) else {
        return;
    };
    let mut parser = connector.parser(&spec(kind), &Default::default());
    for line in String::from_utf8_lossy(output).split('\n') {
        for event in parser.line(line) {
            serde_json::to_string(&event).expect("an event serializes");
        }
    }
    let outcome = parser.finish(Some(0), "some stderr\n");
    assert_eq!(outcome.failed, outcome.error.is_some());
    assert!(parser.finish(Some(1), "").failed, "exit code 1 fails");
}
