use std::collections::BTreeMap;

use super::*;

/// Detects from `files`, each with its text.
fn detect_in(files: &[(&str, &str)]) -> Profile {
    let texts: BTreeMap<&str, &str> = files.iter().copied().collect();
    let names: Vec<&str> = texts.keys().copied().collect();
    detect(&names, |name| texts.get(name).map(|t| (*t).to_owned()))
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_cargo_toml_is_rust_with_cargo_build_test_and_clippy() {
    let p = detect_in(&[("Cargo.toml", "[package]\nname = \"x\"\n"), ("README", "")]);
    assert_eq!(p.languages, strings(&["rust"]));
    assert_eq!(p.build, strings(&["cargo build"]));
    assert_eq!(p.test, strings(&["cargo test"]));
    assert_eq!(
        p.lint,
        strings(&["cargo clippy --all-targets -- -D warnings"])
    );
    assert!(p.constraints.is_empty());
}

#[test]
fn package_json_gives_only_the_scripts_it_has() {
    let json = r#"{"scripts": {"build": "tsc", "lint": "eslint ."}}"#;
    let p = detect_in(&[("package.json", json), ("tsconfig.json", "{}")]);
    assert_eq!(p.languages, strings(&["node", "typescript"]));
    assert_eq!(p.build, strings(&["npm run build"]));
    assert!(p.test.is_empty(), "no test script: {p:?}");
    assert_eq!(p.lint, strings(&["npm run lint"]));

    let json = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
    let p = detect_in(&[("package.json", json)]);
    assert!(p.test.is_empty(), "npm's placeholder is no test: {p:?}");
    let p = detect_in(&[("package.json", r#"{"scripts": {"test": "jest"}}"#)]);
    assert_eq!(p.test, strings(&["npm test"]));
    let p = detect_in(&[("package.json", "not json")]);
    assert_eq!(p.languages, strings(&["node"]));
    assert!(p.build.is_empty() && p.test.is_empty() && p.lint.is_empty());
}

#[test]
fn go_mod_is_go_with_build_test_and_vet() {
    let p = detect_in(&[("go.mod", "module x\n")]);
    assert_eq!(p.languages, strings(&["go"]));
    assert_eq!(p.build, strings(&["go build ./..."]));
    assert_eq!(p.test, strings(&["go test ./..."]));
    assert_eq!(p.lint, strings(&["go vet ./..."]));
}

#[test]
fn python_gets_pytest_and_ruff_only_when_ruff_is_configured() {
    for marker in ["pyproject.toml", "setup.py", "requirements.txt"] {
        let p = detect_in(&[(marker, "")]);
        assert_eq!(p.languages, strings(&["python"]), "{marker}");
        assert_eq!(p.test, strings(&["python -m pytest"]), "{marker}");
        assert!(p.lint.is_empty(), "{marker}: {p:?}");
    }
    let p = detect_in(&[("pyproject.toml", "[tool.ruff]\nline-length = 100\n")]);
    assert_eq!(p.lint, strings(&["ruff check ."]));
    let p = detect_in(&[("pyproject.toml", "[tool.ruff.lint]\nselect = [\"E\"]\n")]);
    assert_eq!(p.lint, strings(&["ruff check ."]));
    let p = detect_in(&[("requirements.txt", ""), ("ruff.toml", "")]);
    assert_eq!(p.lint, strings(&["ruff check ."]));
    let p = detect_in(&[("pyproject.toml", "[tool.black]\n")]);
    assert!(p.lint.is_empty(), "{p:?}");
}

#[test]
fn makefile_targets_replace_the_roles_they_name() {
    let makefile = "\
.PHONY: test lint
CARGO := cargo
X = 1
test: build
\tcargo test
lint fmt:
\t$(CARGO) clippy
# build: not a rule
";
    let p = detect_in(&[("Cargo.toml", ""), ("Makefile", makefile)]);
    assert_eq!(p.languages, strings(&["rust"]));
    assert_eq!(p.build, strings(&["cargo build"]), "no build: target");
    assert_eq!(p.test, strings(&["make test"]));
    assert_eq!(p.lint, strings(&["make lint"]));
    let p = detect_in(&[("Makefile", "build:\n\tcc x.c\n")]);
    assert!(p.languages.is_empty());
    assert_eq!(p.build, strings(&["make build"]));
    assert_eq!(
        make_targets("a b: c\n.PHONY: a\n\trecipe:\nv:=1\n"),
        ["a", "b"]
    );
}

#[test]
fn several_languages_add_up_in_a_fixed_order() {
    let p = detect_in(&[
        ("requirements.txt", ""),
        ("go.mod", ""),
        ("Cargo.toml", ""),
        ("package.json", r#"{"scripts": {"test": "vitest"}}"#),
    ]);
    assert_eq!(p.languages, strings(&["rust", "node", "go", "python"]));
    assert_eq!(
        p.test,
        strings(&[
            "cargo test",
            "npm test",
            "go test ./...",
            "python -m pytest"
        ])
    );
}

#[test]
fn nothing_known_is_an_empty_profile() {
    assert_eq!(detect_in(&[("README.md", "hi")]), Profile::default());
}

#[test]
fn a_profile_round_trips_through_its_file_with_a_header() {
    let mut p = detect_in(&[("Cargo.toml", "")]);
    p.constraints.push("no new dependencies".into());
    let text = p.to_toml();
    assert!(text.starts_with("# Flotilla's project profile"), "{text}");
    assert!(text.contains("`flotilla ready`"), "{text}");
    assert_eq!(Profile::from_toml(&text), Ok(p));
}

#[test]
fn a_bad_profile_says_what_is_wrong_and_how_to_mend_it() {
    let err = Profile::from_toml("lint = [\"x\"]\nformat = [\"y\"]\n").expect_err("unknown key");
    let text = err.to_string();
    assert!(
        text.contains(PROFILE_PATH) && text.contains("format"),
        "{text}"
    );
    assert!(text.contains("flotilla ready --write"), "{text}");
    let err = Profile::from_toml("test = [\"  \"]\n").expect_err("empty");
    assert_eq!(err, ProfileError::EmptyCommand { role: "test" });
    assert!(err.to_string().contains("`test` holds an empty command"));
    assert_eq!(Profile::from_toml(""), Ok(Profile::default()));
}

#[test]
fn commands_come_build_then_test_then_lint() {
    let p = Profile {
        lint: strings(&["l"]),
        build: strings(&["b1", "b2"]),
        test: strings(&["t"]),
        ..Profile::default()
    };
    let roles: Vec<(&str, &str)> = p.commands().map(|(r, c)| (r.as_str(), c)).collect();
    assert_eq!(
        roles,
        [
            ("build", "b1"),
            ("build", "b2"),
            ("test", "t"),
            ("lint", "l")
        ]
    );
}
