//! Service files: a systemd user unit (Linux) or a launchd agent (macOS)
//! that runs `flotilla host run` or `flotilla hub run`, rendered from the
//! templates in `deploy/`.
//!
//! Rendering is pure and tested; installing only writes or removes the one
//! file (it never starts anything: the printed next steps do).

use std::path::{Path, PathBuf};

use crate::home::Home;

const SYSTEMD_TEMPLATE: &str = include_str!("../../../deploy/systemd/flotilla-host.service");
const LAUNCHD_TEMPLATE: &str = include_str!("../../../deploy/launchd/dev.flotilla.host.plist");

/// Which service manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// systemd, user instance.
    Systemd,
    /// launchd, per-user agent.
    Launchd,
}

impl Platform {
    /// The platform this build runs on.
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::Launchd
        } else {
            Self::Systemd
        }
    }
}

/// What the service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceRole {
    /// The host daemon (`host run`).
    Host,
    /// The hub (`hub run`).
    Hub,
}

impl ServiceRole {
    fn command(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Hub => "hub",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Host => "host daemon",
            Self::Hub => "hub",
        }
    }
}

/// A rendered service file and where it goes.
#[derive(Debug, Clone)]
pub struct ServiceFile {
    /// The service manager.
    pub platform: Platform,
    /// The unit's name (systemd) or label (launchd).
    pub name: String,
    /// Where the file is written.
    pub path: PathBuf,
    /// Its text.
    pub contents: String,
    /// Commands that enable and start it (what `--enable` runs, else
    /// what the user is told to run), each as its arguments.
    pub enable: Vec<Vec<String>>,
    /// Advice beyond those commands.
    pub notes: Vec<String>,
    /// Commands the user runs before removing it.
    pub disable: Vec<String>,
}

/// Where the user's environment says things are: the service manager's
/// places and the PATH the service gets.
#[derive(Debug, Clone)]
pub struct UserEnv {
    /// The user's home directory.
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME`, when set (systemd looks for user units there).
    pub config_home: Option<PathBuf>,
    /// The PATH the service runs with.
    pub path: String,
}

/// Whether `exe` sits in a cargo build directory (`target/debug`,
/// `target/release`, `target/TRIPLE/release`...): a `cargo clean` or a
/// rebuild would take a service's binary away.
pub fn in_build_tree(exe: &Path) -> bool {
    let parts: Vec<_> = exe.components().map(|c| c.as_os_str()).collect();
    parts.windows(2).any(|w| {
        w[0] == "target"
            && (w[1] == "debug" || w[1] == "release" || w[1].to_string_lossy().contains('-'))
    })
}

/// Renders the service file that runs `exe host run` (or `hub run`) for
/// `home`, for the user `user` describes.
pub fn render(
    role: ServiceRole,
    platform: Platform,
    exe: &Path,
    home: &Home,
    user: &UserEnv,
) -> ServiceFile {
    let user_home = user.home.as_path();
    let mut args = vec![exe.display().to_string()];
    if let Some(root) = &home.root {
        args.push("--home".into());
        args.push(root.display().to_string());
    }
    let kind = role.command();
    args.extend([kind.into(), "run".into()]);
    let suffix = home
        .root
        .as_ref()
        .map(|r| format!("{:08x}", short_hash(&r.display().to_string())));
    match platform {
        Platform::Systemd => {
            let name = match &suffix {
                Some(s) => format!("flotilla-{kind}-{s}.service"),
                None => format!("flotilla-{kind}.service"),
            };
            let exec: Vec<String> = args.iter().map(|a| systemd_quote(a)).collect();
            let contents = SYSTEMD_TEMPLATE
                .replace("{{WHAT}}", role.what())
                .replace("{{LABEL}}", &home.label())
                .replace("{{EXEC}}", &exec.join(" "))
                .replace("{{PATH}}", &systemd_quote(&format!("PATH={}", user.path)));
            let units = match &user.config_home {
                Some(c) if c.is_absolute() => c.join("systemd/user"),
                _ => user_home.join(".config/systemd/user"),
            };
            let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            ServiceFile {
                platform,
                path: units.join(&name),
                enable: vec![
                    argv(&["systemctl", "--user", "daemon-reload"]),
                    argv(&["systemctl", "--user", "enable", "--now", &name]),
                ],
                disable: vec![format!("systemctl --user disable --now {name}")],
                notes: vec![
                    "to keep it running while you are logged out, and start it at boot: \
                     loginctl enable-linger $USER"
                        .into(),
                ],
                name,
                contents,
            }
        }
        Platform::Launchd => {
            let name = match &suffix {
                Some(s) => format!("dev.flotilla.{kind}.{s}"),
                None => format!("dev.flotilla.{kind}"),
            };
            let items: Vec<String> = args
                .iter()
                .map(|a| format!("    <string>{}</string>", xml_escape(a)))
                .collect();
            let stderr = home
                .logs_dir
                .join("launchd.stderr.log")
                .display()
                .to_string();
            let contents = LAUNCHD_TEMPLATE
                .replace("{{SERVICE}}", &name)
                .replace("{{ARGS}}", &items.join("\n"))
                .replace("{{STDERR}}", &xml_escape(&stderr))
                .replace("{{PATH}}", &xml_escape(&user.path));
            let path = user_home
                .join("Library/LaunchAgents")
                .join(format!("{name}.plist"));
            let uid = rustix::process::getuid().as_raw();
            ServiceFile {
                platform,
                enable: vec![vec![
                    "launchctl".into(),
                    "bootstrap".into(),
                    format!("gui/{uid}"),
                    path.display().to_string(),
                ]],
                notes: Vec::new(),
                disable: vec![format!("launchctl bootout gui/$(id -u) {}", path.display())],
                path,
                name,
                contents,
            }
        }
    }
}

/// Writes the file (0644: service managers read it; it holds no secret).
pub fn install(file: &ServiceFile) -> std::io::Result<()> {
    if let Some(dir) = file.path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&file.path, &file.contents)
}

/// Removes the file; `Ok(false)` when it was not there.
pub fn uninstall(file: &ServiceFile) -> std::io::Result<bool> {
    match std::fs::remove_file(&file.path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

fn systemd_quote(arg: &str) -> String {
    let escaped = arg
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%");
    format!("\"{escaped}\"")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn short_hash(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(home: &str) -> UserEnv {
        UserEnv {
            home: home.into(),
            config_home: None,
            path: "/home/u/.local/bin:/usr/bin".into(),
        }
    }

    #[test]
    fn the_unit_carries_path_honours_xdg_and_waits_for_no_network_target() {
        let home = Home::at("/srv/h");
        let mut env = user("/home/u");
        env.config_home = Some("/home/u/.cfg".into());
        let unit = render(
            ServiceRole::Host,
            Platform::Systemd,
            Path::new("/usr/bin/flotilla"),
            &home,
            &env,
        );
        assert!(
            unit.path.starts_with("/home/u/.cfg/systemd/user"),
            "{}",
            unit.path.display()
        );
        assert!(
            unit.contents
                .contains("Environment=\"PATH=/home/u/.local/bin:/usr/bin\""),
            "{}",
            unit.contents
        );
        assert!(
            !unit.contents.contains("After=network-online.target"),
            "{}",
            unit.contents
        );
        assert!(
            unit.notes
                .iter()
                .any(|n| n.contains("loginctl enable-linger"))
        );
        assert_eq!(
            unit.enable[1],
            ["systemctl", "--user", "enable", "--now", unit.name.as_str()]
        );
        let agent = render(
            ServiceRole::Host,
            Platform::Launchd,
            Path::new("/usr/bin/flotilla"),
            &home,
            &env,
        );
        assert!(
            agent
                .contents
                .contains("<key>PATH</key>\n    <string>/home/u/.local/bin:/usr/bin</string>"),
            "{}",
            agent.contents
        );
    }

    #[test]
    fn a_binary_in_a_cargo_build_directory_is_recognised() {
        assert!(in_build_tree(Path::new(
            "/w/flotilla/target/debug/flotilla"
        )));
        assert!(in_build_tree(Path::new(
            "/w/target/x86_64-unknown-linux-gnu/release/flotilla"
        )));
        assert!(!in_build_tree(Path::new("/usr/local/bin/flotilla")));
        assert!(!in_build_tree(Path::new("/home/u/.cargo/bin/flotilla")));
    }

    #[test]
    fn systemd_unit_runs_the_daemon_for_the_home() {
        let home = Home::at("/srv/my home");
        let unit = render(
            ServiceRole::Host,
            Platform::Systemd,
            Path::new("/usr/bin/flotilla"),
            &home,
            &user("/home/u"),
        );
        assert!(unit.name.starts_with("flotilla-host-") && unit.name.ends_with(".service"));
        assert!(unit.path.starts_with("/home/u/.config/systemd/user"));
        assert!(
            unit.contents.contains(
                "ExecStart=\"/usr/bin/flotilla\" \"--home\" \"/srv/my home\" \"host\" \"run\""
            ),
            "{}",
            unit.contents
        );
        assert!(unit.contents.contains("KillSignal=SIGTERM"));
        assert!(!unit.contents.contains("{{"), "every placeholder is filled");
    }

    #[test]
    fn launchd_agent_is_valid_looking_xml() {
        let home = Home::at("/Users/u/fl<o>");
        let agent = render(
            ServiceRole::Host,
            Platform::Launchd,
            Path::new("/opt/flotilla"),
            &home,
            &user("/Users/u"),
        );
        assert!(agent.path.starts_with("/Users/u/Library/LaunchAgents"));
        assert!(agent.contents.contains("<string>/opt/flotilla</string>"));
        assert!(
            agent
                .contents
                .contains("<string>/Users/u/fl&lt;o&gt;</string>")
        );
        assert!(
            agent
                .contents
                .contains(&format!("<string>{}</string>", agent.name))
        );
        assert!(!agent.contents.contains("{{"));
    }

    #[test]
    fn the_default_home_gets_the_plain_name() {
        let home = Home {
            root: None,
            config_file: "/h/.config/flotilla/config.toml".into(),
            state_dir: "/h/.local/state/flotilla".into(),
            run_dir: "/run/user/1/flotilla".into(),
            logs_dir: "/h/.local/state/flotilla/logs".into(),
            certs_dir: "/h/.config/flotilla/certs".into(),
        };
        let unit = render(
            ServiceRole::Host,
            Platform::Systemd,
            Path::new("/bin/flotilla"),
            &home,
            &user("/h"),
        );
        assert_eq!(unit.name, "flotilla-host.service");
        let hub = render(
            ServiceRole::Hub,
            Platform::Systemd,
            Path::new("/bin/flotilla"),
            &home,
            &user("/h"),
        );
        assert_eq!(hub.name, "flotilla-hub.service");
        assert!(
            hub.contents
                .contains("ExecStart=\"/bin/flotilla\" \"hub\" \"run\"")
        );
        assert!(hub.contents.contains("Description=Flotilla hub ("));
        assert!(
            unit.contents
                .contains("ExecStart=\"/bin/flotilla\" \"host\" \"run\"")
        );
    }
}
