//! A repository's project profile, `.flotilla/profile.toml`: its languages,
//! the commands that build, test and lint it, and free-text constraints a
//! plan must respect; and [`detect`], which guesses one from the
//! repository's top-level marker files (`Cargo.toml`, `package.json`,
//! `go.mod`, Python's files, a `Makefile`).
//!
//! Owns the file's keys, its text ([`Profile::to_toml`]) and the detection
//! rules. Must not read files or run anything: the host lists the top
//! level and hands in a reader.

use serde::{Deserialize, Serialize};

/// Where the profile lives, relative to the repository's top level.
pub const PROFILE_PATH: &str = ".flotilla/profile.toml";

/// The largest marker file [`detect`] reads, and the largest profile.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// What the header of a written profile says.
const HEADER: &str = "\
# Flotilla's project profile: how this repository is built, tested and linted.
# `flotilla ready` detected it; check it, edit it to suit, and commit it.
# Each command runs from the repository's top level; `flotilla ready` checks
# that its tool is installed. `constraints` are rules a plan must respect
# (`flotilla ready --plan FILE` has a lane review a plan against them).
";

/// One repository's profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// Languages, lowercase (`rust`, `node`, `go`, `python`).
    pub languages: Vec<String>,
    /// Commands that build it.
    pub build: Vec<String>,
    /// Commands that test it.
    pub test: Vec<String>,
    /// Commands that lint it.
    pub lint: Vec<String>,
    /// Rules a plan must respect, in plain words ("no new dependencies").
    pub constraints: Vec<String>,
}

/// Where a profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProfileSource {
    /// Read from the repository's profile file.
    File,
    /// Detected from the repository's marker files.
    Detected,
}

/// What a command is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It builds.
    Build,
    /// It tests.
    Test,
    /// It lints.
    Lint,
}

impl Role {
    /// Its key in the profile.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Build => "build",
            Self::Test => "test",
            Self::Lint => "lint",
        }
    }
}

/// Why a profile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// Not TOML, or a key or value this version does not take.
    #[error(
        "{PROFILE_PATH}: {detail} (fix it, or delete it and run `flotilla ready --write` to detect it again)"
    )]
    File {
        /// What the TOML parser said.
        detail: String,
    },
    /// A command is blank.
    #[error("{PROFILE_PATH}: `{role}` holds an empty command; remove it or write the command")]
    EmptyCommand {
        /// `build`, `test` or `lint`.
        role: &'static str,
    },
}

impl Profile {
    /// Reads a profile's text and checks it.
    pub fn from_toml(text: &str) -> Result<Self, ProfileError> {
        let profile: Profile = toml::from_str(text).map_err(|e| ProfileError::File {
            detail: e.message().to_owned(),
        })?;
        if let Some((role, _)) = profile.commands().find(|(_, c)| c.trim().is_empty()) {
            return Err(ProfileError::EmptyCommand {
                role: role.as_str(),
            });
        }
        Ok(profile)
    }

    /// The file's text: a header saying what it is, then the keys.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!("{HEADER}\n{body}")
    }

    /// Every command with its role: build, then test, then lint.
    pub fn commands(&self) -> impl Iterator<Item = (Role, &str)> {
        fn of(role: Role, list: &[String]) -> impl Iterator<Item = (Role, &str)> {
            list.iter().map(move |c| (role, c.as_str()))
        }
        of(Role::Build, &self.build)
            .chain(of(Role::Test, &self.test))
            .chain(of(Role::Lint, &self.lint))
    }

    /// Adds `language` once.
    fn language(&mut self, language: &str) {
        if !self.languages.iter().any(|l| l == language) {
            self.languages.push(language.to_owned());
        }
    }
}

/// The profile `files` (the names at the repository's top level) point
/// to; `read` gives a file's text, if it can be read. Languages come in the
/// order rust, node, go, python; a `Makefile` target `build:`, `test:` or
/// `lint:` replaces that role's detected commands, since it is how the
/// project itself says to do it.
pub fn detect(files: &[&str], read: impl Fn(&str) -> Option<String>) -> Profile {
    let has = |name: &str| files.contains(&name);
    let mut profile = Profile::default();
    if has("Cargo.toml") {
        rust(&mut profile);
    }
    if has("package.json") {
        node(&mut profile, &read("package.json").unwrap_or_default());
        if has("tsconfig.json") {
            profile.language("typescript");
        }
    }
    if has("go.mod") {
        go(&mut profile);
    }
    if ["pyproject.toml", "setup.py", "requirements.txt"]
        .iter()
        .any(|f| has(f))
    {
        let pyproject = read("pyproject.toml").unwrap_or_default();
        python(
            &mut profile,
            &pyproject,
            has("ruff.toml") || has(".ruff.toml"),
        );
    }
    if let Some(makefile) = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .find(|f| has(f))
    {
        make(&mut profile, &read(makefile).unwrap_or_default());
    }
    profile
}

fn rust(p: &mut Profile) {
    p.language("rust");
    p.build.push("cargo build".into());
    p.test.push("cargo test".into());
    p.lint
        .push("cargo clippy --all-targets -- -D warnings".into());
}

/// npm's placeholder `test` script, which only fails.
const NPM_NO_TEST: &str = "no test specified";

fn node(p: &mut Profile, package_json: &str) {
    p.language("node");
    let parsed: serde_json::Value = serde_json::from_str(package_json).unwrap_or_default();
    let script = |name: &str| {
        parsed["scripts"][name]
            .as_str()
            .is_some_and(|s| !s.trim().is_empty() && !s.contains(NPM_NO_TEST))
    };
    if script("build") {
        p.build.push("npm run build".into());
    }
    if script("test") {
        p.test.push("npm test".into());
    }
    if script("lint") {
        p.lint.push("npm run lint".into());
    }
}

fn go(p: &mut Profile) {
    p.language("go");
    p.build.push("go build ./...".into());
    p.test.push("go test ./...".into());
    p.lint.push("go vet ./...".into());
}

fn python(p: &mut Profile, pyproject: &str, ruff_file: bool) {
    p.language("python");
    p.test.push("python -m pytest".into());
    let table: toml::Table = toml::from_str(pyproject).unwrap_or_default();
    let in_pyproject = table.get("tool").and_then(|t| t.get("ruff")).is_some();
    if ruff_file || in_pyproject {
        p.lint.push("ruff check .".into());
    }
}

fn make(p: &mut Profile, makefile: &str) {
    let targets = make_targets(makefile);
    for (role, list) in [
        ("build", &mut p.build),
        ("test", &mut p.test),
        ("lint", &mut p.lint),
    ] {
        if targets.contains(&role) {
            *list = vec![format!("make {role}")];
        }
    }
}

/// The targets a Makefile's rules name (`test:`, `build lint:`), not its
/// variables (`X := 1`), recipes (indented) or special targets (`.PHONY`).
pub fn make_targets(makefile: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for line in makefile.lines() {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((names, rest)) = line.split_once(':') else {
            continue;
        };
        if rest.starts_with('=') || names.contains('=') {
            continue;
        }
        targets.extend(names.split_whitespace().filter(|t| !t.starts_with('.')));
    }
    targets
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
