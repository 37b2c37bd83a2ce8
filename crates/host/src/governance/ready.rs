//! `ready`: a repository's readiness for lanes. Reads its project profile
//! (`.flotilla/profile.toml`) or detects one from its marker files (and
//! writes it when asked, never over a file), checks git, the policy, the
//! profile, each command's tool and the agent CLIs, and has a lane review a
//! plan against the profile when one is given.
//!
//! Owns gathering the facts and the profile file. The rules (detection,
//! routing, what counts as ready) are `flotilla_actors::governance`'s;
//! probes live in [`super::ready_probe`], the plan's lane in
//! [`super::ready_plan`]. Never installs anything, and never runs a file of
//! the repository.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flotilla_actors::governance::plan_review::{MAX_PLAN_BYTES, next_steps};
use flotilla_actors::governance::profile::{MAX_FILE_BYTES, PROFILE_PATH, detect};
use flotilla_actors::governance::{PlanReview, Policy, Profile, ProfileSource, ReadyCheck};
use flotilla_actors::lane::CliKind;
use flotilla_actors::protocol::{ControlError, ErrorCode, LaneDoctorReply, ReadyArgs, ReadyReply};

use super::git::{Git, GitError};
use super::{git_error, ready_plan, ready_probe};
use crate::context::HostContext;

/// `ready`.
pub(crate) async fn ready(
    ctx: &Arc<HostContext>,
    args: ReadyArgs,
) -> Result<ReadyReply, ControlError> {
    check_args(&args)?;
    let dir = PathBuf::from(&args.repo);
    let top = match Git::open(&dir).await {
        Ok(git) => git.dir().to_path_buf(),
        Err(GitError::Missing) => dir,
        Err(e) => return Err(git_error(e)),
    };
    let (policy_check, policy) = policy_check(ctx, &top);
    let loaded = load_profile(&top);
    let written = args.write_profile && loaded.source == ProfileSource::Detected && !loaded.exists;
    if written {
        write_profile(&top, &loaded.profile)?;
    }
    let mut checks = vec![
        ready_probe::git_check().await,
        policy_check,
        profile_check(&loaded, written),
    ];
    checks.extend(ready_probe::tool_checks(&top, &loaded.profile).await);
    let doctor = crate::lanes::doctor::run(&ctx.config, None).await;
    checks.extend(ready_probe::cli_checks(&doctor).await);
    let plan_review = match args.plan.as_deref() {
        Some(plan) => Some(review_plan(ctx, &args, plan, &policy, &doctor, &loaded.profile).await),
        None => None,
    };
    let ready = flotilla_actors::governance::plan_review::is_ready(&checks, plan_review.as_ref());
    Ok(ReadyReply {
        schema: "flotilla.ready.v1".into(),
        repo: top.to_string_lossy().into_owned(),
        next: next_steps(loaded.source, written, &checks, plan_review.as_ref()),
        profile: loaded.profile,
        profile_source: loaded.source,
        profile_written: written,
        checks,
        plan_review,
        ready,
    })
}

/// Has a lane of the CLI asked for (or one that stands in) review `plan`.
async fn review_plan(
    ctx: &Arc<HostContext>,
    args: &ReadyArgs,
    plan: &str,
    policy: &Policy,
    doctor: &LaneDoctorReply,
    profile: &Profile,
) -> PlanReview {
    let installed = ready_probe::usable_clis(doctor);
    let candidates = candidates(policy);
    let want = ready_plan::Want {
        cli: args.reviewer,
        model: args.model.clone(),
        candidates: &candidates,
        installed: &installed,
    };
    ready_plan::review(ctx, want, profile, plan).await
}

/// Refuses what cannot be checked: a relative or missing directory, an
/// empty or oversized plan, `exec` as the reviewer.
fn check_args(args: &ReadyArgs) -> Result<(), ControlError> {
    let bad = |m: String| Err(ControlError::new(ErrorCode::BadRequest, m));
    let dir = Path::new(&args.repo);
    if !dir.is_absolute() || !dir.is_dir() {
        return bad(format!(
            "{} is not an absolute path to a directory; give a directory in the repository",
            args.repo
        ));
    }
    match &args.plan {
        Some(p) if p.trim().is_empty() => {
            return bad("the plan is empty; give a plan file with text in it".into());
        }
        Some(p) if p.len() > MAX_PLAN_BYTES => {
            return bad(format!(
                "the plan is {} bytes; at most {MAX_PLAN_BYTES} are reviewed, so shorten it",
                p.len()
            ));
        }
        _ => {}
    }
    if args.reviewer == Some(CliKind::Exec) {
        return bad("exec cannot review a plan; name an agent CLI with --reviewer".into());
    }
    Ok(())
}

/// The policy as a check (a bad one fails the check, not the op), and the
/// policy to use (the defaults when it is bad).
fn policy_check(ctx: &HostContext, top: &Path) -> (ReadyCheck, Policy) {
    let user = ctx.home.policy_file();
    let files: Vec<String> = [user.clone(), top.join(".flotilla/policy.toml")]
        .iter()
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    let (ok, detail, why, policy) = match super::policy_file::load(&user, Some(top)).1 {
        Ok(policy) => {
            let detail = if files.is_empty() {
                "valid (no policy file: the defaults)".to_owned()
            } else {
                format!("valid ({})", files.join(" over "))
            };
            (true, detail, None, policy)
        }
        Err(e) => (
            false,
            e,
            Some(
                "`flotilla policy check REPO` shows the policy and what is wrong with it"
                    .to_owned(),
            ),
            Policy::default(),
        ),
    };
    let check = ReadyCheck {
        name: "policy".into(),
        ok,
        required: true,
        detail,
        routed_to: None,
        why,
    };
    (check, policy)
}

/// The profile and where it came from.
#[derive(Debug)]
struct Loaded {
    profile: Profile,
    source: ProfileSource,
    /// Whether the file exists (read or not).
    exists: bool,
    /// Why the file could not be used, when it exists.
    problem: Option<String>,
}

/// The repository's profile file, else the detected profile.
fn load_profile(top: &Path) -> Loaded {
    let path = top.join(PROFILE_PATH);
    let detected = |problem: Option<String>, exists: bool| Loaded {
        profile: detect_in(top),
        source: ProfileSource::Detected,
        exists,
        problem,
    };
    if !path.exists() {
        return detected(None, false);
    }
    let text = match read_capped(&path) {
        Ok(text) => text,
        Err(e) => return detected(Some(format!("cannot read {PROFILE_PATH}: {e}")), true),
    };
    match Profile::from_toml(&text) {
        Ok(profile) => Loaded {
            profile,
            source: ProfileSource::File,
            exists: true,
            problem: None,
        },
        Err(e) => detected(Some(e.to_string()), true),
    }
}

/// What the top-level marker files say.
fn detect_in(top: &Path) -> Profile {
    let names: Vec<String> = std::fs::read_dir(top)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    detect(&names, |name| read_capped(&top.join(name)).ok())
}

/// A file's text, at most [`MAX_FILE_BYTES`].
fn read_capped(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// Writes the profile file, which must not exist yet.
fn write_profile(top: &Path, profile: &Profile) -> Result<(), ControlError> {
    let path = top.join(PROFILE_PATH);
    let fail = |e: std::io::Error| {
        ControlError::internal(format!("cannot write {}: {e}", path.display()))
            .with_hint("check the repository's permissions, or write the file by hand")
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(fail)?;
    std::io::Write::write_all(&mut file, profile.to_toml().as_bytes()).map_err(fail)
}

/// The profile as a check: a file that cannot be used, or a profile with
/// no command, fails it.
fn profile_check(loaded: &Loaded, written: bool) -> ReadyCheck {
    let p = &loaded.profile;
    let empty = p.build.is_empty() && p.test.is_empty() && p.lint.is_empty();
    let (ok, detail, why) = if let Some(problem) = &loaded.problem {
        let why = "fix it; the detected profile was checked meanwhile (--write never overwrites the file)";
        (false, problem.clone(), Some(why.to_owned()))
    } else if empty {
        let why = format!(
            "write the commands into {PROFILE_PATH} (keys: languages, build, test, lint, constraints)"
        );
        (
            false,
            "no build, test or lint command".to_owned(),
            Some(why),
        )
    } else {
        let detail = match (loaded.source, written) {
            (ProfileSource::File, _) => format!("read from {PROFILE_PATH}"),
            (ProfileSource::Detected, true) => format!("detected and written to {PROFILE_PATH}"),
            (ProfileSource::Detected, false) => "detected; not written".to_owned(),
        };
        (true, detail, None)
    };
    ReadyCheck {
        name: "profile".into(),
        ok,
        required: true,
        detail,
        routed_to: None,
        why,
    }
}

/// The CLIs to try for a plan's review: the policy's reviewers, then every
/// other agent CLI.
fn candidates(policy: &Policy) -> Vec<CliKind> {
    let mut all: Vec<CliKind> = (policy.review.reviewers.iter())
        .filter_map(|r| r.parse().ok())
        .collect();
    for cli in CliKind::ALL {
        if cli != CliKind::Exec && !all.contains(&cli) {
            all.push(cli);
        }
    }
    all.retain(|c| *c != CliKind::Exec);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policys_reviewers_come_first_then_every_other_agent_cli() {
        use CliKind::*;
        assert_eq!(
            candidates(&Policy::default()),
            [Codex, Claude, Gemini, Qwen, Grok, Pi, Opencode]
        );
        let mut policy = Policy::default();
        policy.review.reviewers = ["claude", "exec", "bogus"].map(String::from).to_vec();
        assert_eq!(
            candidates(&policy),
            [Claude, Codex, Qwen, Gemini, Pi, Opencode, Grok]
        );
    }

    #[test]
    fn a_profile_file_is_read_and_a_bad_one_is_named_while_the_detected_one_is_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("go.mod"), "module x\n").expect("go.mod");
        let loaded = load_profile(dir.path());
        assert_eq!(
            (loaded.source, loaded.exists),
            (ProfileSource::Detected, false)
        );
        assert_eq!(loaded.profile.languages, ["go"]);
        assert!(profile_check(&loaded, false).ok);

        write_profile(dir.path(), &loaded.profile).expect("written");
        assert!(
            write_profile(dir.path(), &loaded.profile).is_err(),
            "never over a file"
        );
        let read = load_profile(dir.path());
        assert_eq!(
            (read.source, read.profile),
            (ProfileSource::File, loaded.profile)
        );

        std::fs::write(dir.path().join(PROFILE_PATH), "tests = []\n").expect("bad");
        let bad = load_profile(dir.path());
        assert_eq!((bad.source, bad.exists), (ProfileSource::Detected, true));
        let check = profile_check(&bad, false);
        assert!(!check.ok && check.detail.contains("tests"), "{check:?}");
    }

    #[test]
    fn a_profile_with_no_command_fails_its_check() {
        let loaded = Loaded {
            profile: Profile::default(),
            source: ProfileSource::Detected,
            exists: false,
            problem: None,
        };
        let check = profile_check(&loaded, false);
        assert!(!check.ok && check.blocks(), "{check:?}");
        assert!(check.why.is_some_and(|w| w.contains(PROFILE_PATH)));
    }
}
