//! Prepares a lane's private configuration directory for a CLI
//! ([`CliHome`]) before a turn starts: each entry of the user's own
//! directory is linked in (so login, history, trusted folders and sessions
//! are the user's), and the settings file is the user's settings with
//! Flotilla's MCP server added, written 0600. Nothing of the user's is
//! written or copied: a credential file stays where it is, reached through
//! its link. Links to entries the user removed are dropped; files the CLI
//! created in the private directory stay.

use std::io;
use std::path::Path;

use super::cli::CliHome;
use super::cli::mcp_settings_with_server;
use crate::home::create_private;

/// Prepares `home`; returns a warning when the user's settings could not
/// be read (the CLI then sees them as they are, without Flotilla's tools).
pub fn prepare(home: &CliHome) -> io::Result<Option<String>> {
    create_private(&home.dir).map_err(io::Error::other)?;
    drop_stale_links(home)?;
    link_entries(home)?;
    write_settings(home)
}

fn is_link(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
}

fn drop_stale_links(home: &CliHome) -> io::Result<()> {
    for entry in std::fs::read_dir(&home.dir)? {
        let path = entry?.path();
        let Some(name) = path.file_name() else {
            continue;
        };
        let gone = !home.source.join(name).exists();
        if is_link(&path) && (gone || name == home.settings) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

fn link_entries(home: &CliHome) -> io::Result<()> {
    let entries = match std::fs::read_dir(&home.source) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let name = entry?.file_name();
        let target = home.dir.join(&name);
        if name == home.settings || target.symlink_metadata().is_ok() {
            continue;
        }
        std::os::unix::fs::symlink(home.source.join(&name), target)?;
    }
    Ok(())
}

fn write_settings(home: &CliHome) -> io::Result<Option<String>> {
    let user_file = home.source.join(home.settings);
    let user = match std::fs::read_to_string(&user_file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let target = home.dir.join(home.settings);
    match mcp_settings_with_server(user.as_deref(), &home.server, &home.hooks) {
        Ok(merged) => {
            crate::lanes::connector::write_private(&target, &merged)?;
            Ok(None)
        }
        Err(why) => {
            if target.symlink_metadata().is_ok() {
                std::fs::remove_file(&target)?;
            }
            std::os::unix::fs::symlink(&user_file, &target)?;
            Ok(Some(format!(
                "{} is {why}: the CLI runs with it as it is, without Flotilla's MCP tools",
                user_file.display()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn the_users_entries_are_linked_and_the_settings_gain_the_server() {
        let tmp = tempfile::tempdir().expect("tmp");
        let source = tmp.path().join("user");
        std::fs::create_dir_all(source.join("tmp")).expect("dir");
        std::fs::write(source.join("oauth_creds.json"), "secret").expect("creds");
        std::fs::write(source.join("settings.json"), r#"{"ui": {"theme": "x"}}"#).expect("s");
        let home = CliHome {
            dir: tmp.path().join("lane/.gemini"),
            source: source.clone(),
            settings: "settings.json",
            server: ("flotilla".into(), json!({"command": "f"})),
            hooks: Default::default(),
        };
        assert_eq!(prepare(&home).expect("prepare"), None);
        let creds = home.dir.join("oauth_creds.json");
        assert!(is_link(&creds), "credentials are linked, not copied");
        assert_eq!(
            std::fs::read_link(&creds).expect("link"),
            source.join("oauth_creds.json")
        );
        let settings = home.dir.join("settings.json");
        assert!(!is_link(&settings));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
        assert_eq!(v["ui"]["theme"], "x");
        assert_eq!(v["mcpServers"]["flotilla"]["command"], "f");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&settings)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // The user's file is untouched; a removed entry loses its link.
        assert_eq!(
            std::fs::read_to_string(source.join("settings.json")).expect("read"),
            r#"{"ui": {"theme": "x"}}"#
        );
        std::fs::remove_file(source.join("oauth_creds.json")).expect("rm");
        prepare(&home).expect("again");
        assert!(
            home.dir
                .join("oauth_creds.json")
                .symlink_metadata()
                .is_err()
        );
    }

    #[test]
    fn unreadable_settings_are_used_as_they_are_with_a_warning() {
        let tmp = tempfile::tempdir().expect("tmp");
        let source = tmp.path().join("user");
        std::fs::create_dir_all(&source).expect("dir");
        std::fs::write(source.join("settings.json"), "// jsonc\n{}").expect("s");
        let home = CliHome {
            dir: tmp.path().join("lane"),
            source,
            settings: "settings.json",
            server: ("flotilla".into(), json!({})),
            hooks: Default::default(),
        };
        let warning = prepare(&home).expect("prepare").expect("a warning");
        assert!(
            warning.contains("without Flotilla's MCP tools"),
            "{warning}"
        );
        assert!(is_link(&home.dir.join("settings.json")));
    }
}
