use super::*;

fn found(pairs: &[(&str, bool)]) -> BTreeMap<String, ToolState> {
    pairs
        .iter()
        .map(|(tool, usable)| {
            let state = if *usable {
                ToolState::Usable(format!("{tool} 1.0"))
            } else {
                ToolState::Unusable(format!("{tool}: not found on the daemon's PATH"))
            };
            ((*tool).to_owned(), state)
        })
        .collect()
}

fn profile(lint: &[&str]) -> Profile {
    Profile {
        build: vec!["cargo build".into()],
        lint: lint.iter().map(|c| (*c).to_owned()).collect(),
        ..Profile::default()
    }
}

#[test]
fn a_tool_is_the_first_word_or_the_cargo_subcommand_or_python_module() {
    let cases = [
        ("cargo build --release", "cargo"),
        ("cargo clippy --all-targets -- -D warnings", "cargo clippy"),
        ("cargo +nightly fmt --check", "cargo +nightly fmt"),
        ("cargo +1.80 build", "cargo +1.80"),
        ("cargo nextest run", "cargo nextest"),
        ("python -m pytest -q", "python -m pytest"),
        ("python3 -m unittest discover", "python3"),
        ("RUST_LOG=debug cargo test", "cargo"),
        ("npm run lint", "npm"),
        ("./scripts/lint.sh --all", "./scripts/lint.sh"),
        ("nosuchlinter --all", "nosuchlinter"),
    ];
    for (command, tool) in cases {
        assert_eq!(tool_of(command).as_deref(), Some(tool), "{command}");
    }
    assert_eq!(tool_of("   "), None);
}

#[test]
fn tools_are_listed_once_in_order_with_their_alternatives_to_probe() {
    let p = Profile {
        build: vec!["cargo build".into()],
        test: vec!["cargo test".into(), "python -m pytest".into()],
        lint: vec!["cargo clippy --all-targets".into()],
        ..Profile::default()
    };
    assert_eq!(tools_of(&p), ["cargo", "python -m pytest", "cargo clippy"]);
    let mut known = BTreeMap::new();
    assert_eq!(
        tools_to_probe(&p, &known),
        tools_of(&p),
        "the profile's first"
    );
    known.extend(found(&[
        ("cargo", true),
        ("python -m pytest", false),
        ("cargo clippy", true),
    ]));
    assert_eq!(
        tools_to_probe(&p, &known),
        ["python3 -m pytest", "python", "python3"],
        "then the alternatives of what is missing"
    );
    known.extend(found(&[
        ("python3 -m pytest", false),
        ("python", true),
        ("python3", true),
    ]));
    assert!(tools_to_probe(&p, &known).is_empty());
}

#[test]
fn probes_ask_the_version_but_never_run_the_repositorys_files() {
    let words = |w: &[&str]| Probe::Version(w.iter().map(|s| (*s).to_owned()).collect());
    assert_eq!(probe_of("cargo"), words(&["cargo", "--version"]));
    assert_eq!(
        probe_of("cargo clippy"),
        words(&["cargo", "clippy", "--version"])
    );
    assert_eq!(probe_of("go"), words(&["go", "version"]));
    assert_eq!(probe_of("sh"), Probe::OnPath("sh".into()));
    assert_eq!(
        probe_of("./scripts/lint.sh"),
        Probe::InRepo("./scripts/lint.sh".into())
    );
}

#[test]
fn the_version_line_is_the_first_line_said() {
    assert_eq!(
        version_line("\n cargo 1.95.0 (f2d3ce0bd)\nmore\n", "warn"),
        Some("cargo 1.95.0 (f2d3ce0bd)".into())
    );
    assert_eq!(
        version_line("", "Python 2.7.18\n"),
        Some("Python 2.7.18".into())
    );
    assert_eq!(version_line(" \n", ""), None);
    assert_eq!(
        version_line(&"x".repeat(500), "").map(|l| l.chars().count()),
        Some(200)
    );
}

#[test]
fn a_missing_clippy_routes_to_cargo_check_when_cargo_is_there() {
    let r = route("cargo clippy --all-targets -- -D warnings", |t| {
        t == "cargo"
    })
    .expect("routed");
    assert_eq!(r.command.as_deref(), Some("cargo check --all-targets"));
    assert!(r.why.contains("rustup component add clippy"), "{}", r.why);
    assert_eq!(route("cargo clippy", |_| false), None, "no cargo either");
}

#[test]
fn a_missing_ruff_routes_to_pyflakes_else_skips() {
    let r = route("ruff check .", |t| t == "python -m pyflakes").expect("pyflakes");
    assert_eq!(r.command.as_deref(), Some("python -m pyflakes ."));
    let r = route("ruff check .", |t| t == "python3 -m pyflakes").expect("pyflakes");
    assert_eq!(r.command.as_deref(), Some("python3 -m pyflakes ."));
    let r = route("ruff check .", |_| false).expect("a skip");
    assert_eq!(r.command, None);
    assert!(r.why.contains("skipped"), "{}", r.why);
}

#[test]
fn other_routes_keep_the_commands_arguments() {
    let to = |command: &str, usable: &str| route(command, |t| t == usable).and_then(|r| r.command);
    assert_eq!(to("npm run lint", "yarn").as_deref(), Some("yarn run lint"));
    assert_eq!(to("npm test", "pnpm").as_deref(), Some("pnpm test"));
    assert_eq!(
        to("python -m pytest -q", "python3 -m pytest").as_deref(),
        Some("python3 -m pytest -q")
    );
    assert_eq!(
        to("python -m pytest", "python").as_deref(),
        Some("python -m unittest discover")
    );
    assert_eq!(
        to("pytest -x", "python -m pytest").as_deref(),
        Some("python -m pytest -x")
    );
    assert_eq!(
        to("python3 -m pytest", "python3").as_deref(),
        Some("python3 -m unittest discover"),
        "the interpreter that is there"
    );
    assert_eq!(
        to("golangci-lint run", "go").as_deref(),
        Some("go vet ./...")
    );
    assert_eq!(
        to("cargo nextest run", "cargo").as_deref(),
        Some("cargo test")
    );
    assert_eq!(to("nosuchlinter --all", "cargo"), None, "nothing stands in");
    assert_eq!(
        route("cargo fmt --check", |_| false).map(|r| r.command),
        Some(None)
    );
}

#[test]
fn tool_checks_pass_route_or_fail_with_what_to_do() {
    let p = profile(&[
        "cargo clippy --all-targets -- -D warnings",
        "nosuchlinter --all",
    ]);
    let checks = tool_checks(
        &p,
        &found(&[
            ("cargo", true),
            ("cargo clippy", false),
            ("nosuchlinter", false),
        ]),
    );
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "build: cargo build",
            "lint: cargo clippy --all-targets -- -D warnings",
            "lint: nosuchlinter --all"
        ]
    );
    let [build, clippy, nosuch] = checks.as_slice() else {
        panic!("three checks: {checks:?}");
    };
    assert!(build.ok && !build.blocks() && build.routed_to.is_none());
    assert_eq!(build.detail, "cargo 1.0");
    assert!(!clippy.ok && !clippy.blocks());
    assert_eq!(
        clippy.routed_to.as_deref(),
        Some("cargo check --all-targets")
    );
    assert!(!nosuch.ok && nosuch.blocks() && nosuch.routed_to.is_none());
    assert!(
        nosuch
            .why
            .as_deref()
            .is_some_and(|w| w.contains("install nosuchlinter") && w.contains(PROFILE_PATH)),
        "{nosuch:?}"
    );
}

#[test]
fn a_skipped_command_is_routed_to_skip() {
    let checks = tool_checks(&profile(&["cargo fmt --check"]), &found(&[("cargo", true)]));
    let fmt = &checks[1];
    assert_eq!(fmt.routed_to.as_deref(), Some(SKIP));
    assert!(fmt.detail.contains("not checked"), "{fmt:?}");
    assert!(!fmt.blocks());
}

#[test]
fn only_claude_and_codex_can_say_whether_they_are_logged_in() {
    assert_eq!(login_probe(CliKind::Claude), Some(&["auth", "status"][..]));
    assert_eq!(login_probe(CliKind::Codex), Some(&["login", "status"][..]));
    for cli in [
        CliKind::Gemini,
        CliKind::Qwen,
        CliKind::Pi,
        CliKind::Opencode,
        CliKind::Grok,
    ] {
        assert_eq!(login_probe(cli), None, "{cli}");
    }
}
