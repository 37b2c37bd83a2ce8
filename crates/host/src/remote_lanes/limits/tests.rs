use super::*;

fn limits(config: &str) -> Result<LaneLimits, LimitsError> {
    let config = HostConfig::parse(config).expect("config");
    LaneLimits::from_config(&config, Path::new("/home/u/state/remote-lanes"))
}

fn start(cli: CliKind) -> LaneStartArgs {
    serde_json::from_value(serde_json::json!({
        "name": "x", "cli": cli.as_str(), "prompt": "p"
    }))
    .expect("start args")
}

#[test]
fn the_defaults_grant_workspace_no_env_no_args_and_the_state_root() {
    let l = limits("").expect("defaults");
    assert_eq!(l.roots, [PathBuf::from("/home/u/state/remote-lanes")]);
    assert_eq!(l.max_permissions, Permissions::Workspace);
    assert!(l.env.is_empty() && !l.args);
    assert_eq!(l.check(&start(CliKind::Claude)), Ok(()));
}

#[test]
fn a_bad_limit_names_its_key() {
    let err = limits("remote_lane_max_permissions = \"root\"").expect_err("mode");
    assert!(
        err.to_string().starts_with("remote_lane_max_permissions:"),
        "{err}"
    );
    let err = limits("remote_lane_roots = [\"rel\"]").expect_err("relative");
    assert_eq!(err, LimitsError::RelativeRoot("rel".into()));
    for name in ["", "A=B", "A\0"] {
        let config = HostConfig {
            remote_lane_env: vec![name.into()],
            ..HostConfig::default()
        };
        let err = LaneLimits::from_config(&config, Path::new("/r")).expect_err("name");
        assert!(err.to_string().contains("remote_lane_env"), "{err}");
    }
}

#[test]
fn a_mode_above_the_highest_is_refused_not_lowered() {
    use Permissions::*;
    assert_eq!(check_permissions(Default, Workspace), Ok(()));
    assert_eq!(check_permissions(Workspace, Workspace), Ok(()));
    let err = check_permissions(Bypass, Workspace).expect_err("bypass");
    assert!(
        err.to_string()
            .contains("remote_lane_max_permissions = workspace"),
        "{err}"
    );
    assert!(check_permissions(Workspace, Default).is_err());
    assert_eq!(check_permissions(Bypass, Bypass), Ok(()));
}

#[test]
fn only_allowed_variables_may_be_set() {
    let none = BTreeSet::new();
    assert_eq!(check_env(&[], &none), Ok(()));
    let preload = [("LD_PRELOAD".to_owned(), "/x.so".to_owned())];
    let err = check_env(&preload, &none).expect_err("preload");
    assert!(err.to_string().contains("LD_PRELOAD"), "{err}");
    assert!(err.to_string().contains("remote_lane_env: none"), "{err}");
    let allowed: BTreeSet<String> = ["GREETING".to_owned()].into();
    let greeting = [("GREETING".to_owned(), "hi".to_owned())];
    assert_eq!(check_env(&greeting, &allowed), Ok(()));
    assert!(check_env(&[greeting[0].clone(), preload[0].clone()], &allowed).is_err());
}

#[test]
fn native_arguments_need_the_operators_yes_except_for_exec() {
    let mcp = ["--mcp-config".to_owned(), "/x.json".to_owned()];
    let err = check_args(CliKind::Claude, &mcp, false).expect_err("claude");
    assert!(
        err.to_string().contains("remote_lane_args = false"),
        "{err}"
    );
    assert_eq!(check_args(CliKind::Claude, &mcp, true), Ok(()));
    assert_eq!(check_args(CliKind::Claude, &[], false), Ok(()));
    assert_eq!(check_args(CliKind::Exec, &mcp, false), Ok(()));
    let mut s = start(CliKind::Codex);
    s.args = mcp.to_vec();
    assert!(limits("").expect("defaults").check(&s).is_err());
}

#[test]
fn a_directory_is_checked_as_written_then_as_resolved() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("base");
    let root = base.join("root");
    std::fs::create_dir_all(root.join("app")).expect("app");
    std::fs::create_dir_all(base.join("rootless")).expect("sibling");
    std::os::unix::fs::symlink("/etc", root.join("out")).expect("symlink");
    let l = LaneLimits::from_config(&HostConfig::default(), &root).expect("limits");
    let resolve =
        |dir: &Path| l.resolve_cwd(&dir.display().to_string(), |p| std::fs::canonicalize(p));
    assert_eq!(resolve(&root.join("app")), Ok(root.join("app")));
    assert_eq!(resolve(&root.join("app/../app/.")), Ok(root.join("app")));
    assert_eq!(resolve(&root), Ok(root.clone()));
    for outside in [
        PathBuf::from("/etc"),
        root.join(".."),
        root.join("app/../../rootless"),
        base.join("rootless"),
        root.join("out"),
        PathBuf::from("app"),
        PathBuf::from("/.."),
    ] {
        let err = resolve(&outside).expect_err("outside");
        assert!(matches!(err, Refusal::Cwd { .. }), "{outside:?}: {err}");
        assert!(err.to_string().contains("remote_lane_roots"), "{err}");
    }
    let err = resolve(&root.join("missing")).expect_err("missing");
    assert!(matches!(err, Refusal::MissingCwd { .. }), "{err}");
}

#[test]
fn nothing_outside_the_roots_is_looked_at() {
    let l = LaneLimits::from_config(&HostConfig::default(), Path::new("/r")).expect("limits");
    let looked = std::cell::RefCell::new(Vec::new());
    let spy = |p: &Path| {
        looked.borrow_mut().push(p.to_path_buf());
        Ok(p.to_path_buf())
    };
    assert!(l.resolve_cwd("/root/.ssh", spy).is_err());
    assert!(l.resolve_cwd("/r/../root", spy).is_err());
    assert!(looked.borrow().is_empty(), "{looked:?}");
}
