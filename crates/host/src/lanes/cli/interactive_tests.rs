//! Tests of the interactive command lines: tools, hooks, resume, refusals.

use super::*;

fn server() -> McpServer {
    McpServer {
        program: "/bin/flotilla".into(),
        args: vec!["mcp".into(), "--as".into(), "s".into()],
        env: vec![],
    }
}

fn plan(cli: CliKind, resume: Option<&str>) -> Result<InteractivePlan, String> {
    let hook = vec![
        "/bin/flotilla".to_owned(),
        "--home".into(),
        "/h x".into(),
        "hook".into(),
    ];
    let args = vec!["--verbose".to_owned()];
    let ctx = InteractiveContext {
        program: "cli",
        server: &server(),
        hook: Some(&hook),
        peer: "s",
        pid: 42,
        resume,
        args: &args,
        dir: Path::new("/s"),
        env: &[("HOME".into(), "/u".into())],
    };
    interactive_plan(cli, &ctx)
}

#[test]
fn only_gemini_sheds_the_ci_markers() {
    for cli in [CliKind::Claude, CliKind::Codex, CliKind::Qwen, CliKind::Pi] {
        assert!(
            plan(cli, None).expect("plan").env_removed.is_empty(),
            "{cli}"
        );
    }
    let gemini = plan(CliKind::Gemini, None).expect("plan");
    assert_eq!(gemini.env_removed, ["CI", "GITHUB_ACTIONS"]);
}

#[test]
fn claude_gets_tools_hooks_and_its_resume_flag() {
    let i = plan(CliKind::Claude, Some("abc")).expect("plan");
    assert_eq!(i.delivery, "live");
    assert!(i.relay.is_none());
    let p = i.plan;
    assert!(!p.stdin_prompt);
    let at = p
        .argv
        .iter()
        .position(|a| a == "--settings")
        .expect("settings");
    let hooks: serde_json::Value = serde_json::from_str(&p.argv[at + 1]).expect("json");
    let wait = &hooks["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(wait["asyncRewake"], true);
    assert_eq!(
        wait["command"],
        "/bin/flotilla --home '/h x' hook wait --as s --session-pid 42"
    );
    assert_eq!(p.argv[p.argv.len() - 3..], ["--resume", "abc", "--verbose"]);
}

#[test]
fn codex_gets_hooks_and_a_relay_beside_it() {
    let i = plan(CliKind::Codex, Some("t1")).expect("plan");
    assert_eq!(i.delivery, "live");
    let argv = &i.plan.argv;
    assert!(argv.windows(2).any(|w| w == ["resume", "t1"]));
    let stop = argv
        .iter()
        .find(|a| a.starts_with("hooks.Stop="))
        .expect("a Stop hook");
    assert!(
        stop.contains(r#"command="/bin/flotilla --home '/h x' hook stop Stop --record-thread""#),
        "the same for every session: {stop}"
    );
    let relay = i.relay.expect("relay");
    assert_eq!(relay[4..7], ["relay", "--codex", "cli"]);
    assert_eq!(relay[7..], ["--as", "s", "--session-pid", "42"]);
}

#[test]
fn gemini_and_qwen_get_hooks_in_their_private_settings() {
    for (cli, stop) in [(CliKind::Gemini, "AfterAgent"), (CliKind::Qwen, "Stop")] {
        let i = plan(cli, None).expect("plan");
        assert_eq!(i.delivery, "next-turn");
        let home = i.plan.cli_home.expect("a private home");
        let hook = &home.hooks[stop][0]["hooks"][0];
        assert_eq!(hook["timeout"], 30_000, "milliseconds");
        let command = hook["command"].as_str().expect("command");
        assert!(
            command.ends_with(&format!("hook stop {stop} --as s --session-pid 42")),
            "{command}"
        );
        assert_eq!(home.hooks.len(), 3);
    }
}

#[test]
fn the_rest_poll_and_refuse_what_they_cannot_do() {
    for cli in [CliKind::Pi, CliKind::Opencode, CliKind::Grok] {
        assert_eq!(plan(cli, None).expect("plan").delivery, "poll");
    }
    assert!(plan(CliKind::Grok, Some("x")).is_err());
    assert!(plan(CliKind::Exec, None).is_err());
}

#[test]
fn without_a_hook_command_no_cli_gets_delivery_hooks() {
    for cli in [
        CliKind::Claude,
        CliKind::Codex,
        CliKind::Gemini,
        CliKind::Qwen,
        CliKind::Pi,
        CliKind::Opencode,
    ] {
        let ctx = InteractiveContext {
            program: "cli",
            server: &server(),
            hook: None,
            peer: "lane",
            pid: 42,
            resume: Some("abc"),
            args: &[],
            dir: Path::new("/lanes/lane"),
            env: &[("HOME".into(), "/u".into())],
        };
        let i = interactive_plan(cli, &ctx).expect("plan");
        assert_eq!(i.delivery, "none", "{cli}");
        assert!(i.relay.is_none(), "{cli}");
        let argv = i.plan.argv.join(" ");
        assert!(!argv.contains("hook"), "{cli}: {argv}");
        assert!(argv.contains("abc"), "{cli} resumes: {argv}");
        if let Some(home) = i.plan.cli_home {
            assert!(home.hooks.is_empty(), "{cli}");
            assert!(
                home.dir.starts_with("/lanes/lane"),
                "{cli}: the lane's own home"
            );
        }
    }
}
