//! Registering Flotilla's MCP server with a CLI for one run only, in the
//! form each CLI takes: a JSON string on the command line (Claude Code),
//! `-c` overrides (Codex), a private configuration directory that links the
//! user's and adds the server (Gemini CLI, Qwen Code), a config passed in
//! the environment (opencode). The user's own configuration files are
//! never edited; only the Flotilla tools are pre-approved. Plain text
//! building, no IO: what the plan names is prepared by the connector actor
//! ([`crate::lanes::cli_home`]).

use serde_json::{Value, json};

use std::path::Path;

use super::common::config_dir;
use super::{CliHome, CommandPlan};
use crate::lanes::identity::McpServer;

/// The server's name in every CLI's configuration (Claude Code and Codex
/// name its tools `mcp__flotilla__TOOL`).
pub(super) const SERVER: &str = "flotilla";

fn env_object(server: &McpServer) -> Value {
    server
        .env
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Claude Code: `--mcp-config JSON --allowedTools mcp__flotilla`. Both
/// options take several values, so the caller puts another option after.
pub(super) fn claude(plan: &mut CommandPlan, server: &McpServer) {
    let config = json!({"mcpServers": {SERVER: {
        "type": "stdio",
        "command": server.program,
        "args": server.args,
        "env": env_object(server),
    }}});
    plan.args(["--mcp-config", &config.to_string()]);
    plan.args(["--allowedTools", &format!("mcp__{SERVER}")]);
}

fn toml_string(s: &str) -> String {
    // A TOML basic string has the escapes of a JSON string.
    Value::from(s).to_string()
}

fn toml_array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
    format!("[{}]", items.join(", "))
}

/// Codex: `-c mcp_servers.flotilla.…` overrides for this run, its tools
/// pre-approved.
pub(super) fn codex(plan: &mut CommandPlan, server: &McpServer) {
    let key = format!("mcp_servers.{SERVER}");
    let env: Vec<String> = server
        .env
        .iter()
        .map(|(k, v)| format!("{k} = {}", toml_string(v)))
        .collect();
    plan.args([
        "-c".to_owned(),
        format!("{key}.command={}", toml_string(&server.program)),
        "-c".to_owned(),
        format!("{key}.args={}", toml_array(&server.args)),
        "-c".to_owned(),
        format!("{key}.env={{ {} }}", env.join(", ")),
        // Pre-approved: `codex exec` refuses an MCP call that needs approval.
        "-c".to_owned(),
        format!("{key}.default_tools_approval_mode=\"approve\""),
    ]);
}

/// The `mcpServers` entry of Gemini CLI and Qwen Code: trusted, so its
/// tools need no confirmation.
fn settings_entry(server: &McpServer) -> (String, Value) {
    let entry = json!({
        "command": server.program,
        "args": server.args,
        "env": env_object(server),
        "trust": true,
    });
    (SERVER.to_owned(), entry)
}

/// Gemini CLI: `GEMINI_CLI_HOME` names a private home under the lane's
/// directory whose `.gemini` links the user's and adds the server. (Its
/// system-settings layer is no way in: Gemini reads it only from
/// directories owned by root.)
pub(super) fn gemini(
    plan: &mut CommandPlan,
    server: &McpServer,
    env: &[(String, String)],
    lane_dir: &Path,
) {
    let Some(base) = config_dir(env, "GEMINI_CLI_HOME", "") else {
        plan.note("no HOME: gemini runs without Flotilla's MCP tools");
        return;
    };
    let root = lane_dir.join("gemini-home");
    plan.env("GEMINI_CLI_HOME", &root.display().to_string());
    plan.cli_home = Some(Box::new(CliHome {
        dir: root.join(".gemini"),
        source: base.join(".gemini"),
        settings: "settings.json",
        server: settings_entry(server),
        hooks: serde_json::Map::new(),
    }));
}

/// Qwen Code: `QWEN_HOME` names a private directory under the lane's that
/// links the user's `~/.qwen` (or `QWEN_HOME`) and adds the server.
pub(super) fn qwen(
    plan: &mut CommandPlan,
    server: &McpServer,
    env: &[(String, String)],
    lane_dir: &Path,
) {
    let Some(source) = config_dir(env, "QWEN_HOME", ".qwen") else {
        plan.note("no HOME: qwen runs without Flotilla's MCP tools");
        return;
    };
    let dir = lane_dir.join("qwen-home");
    plan.env("QWEN_HOME", &dir.display().to_string());
    plan.cli_home = Some(Box::new(CliHome {
        dir,
        source,
        settings: "settings.json",
        server: settings_entry(server),
        hooks: serde_json::Map::new(),
    }));
}

/// The user's settings (JSON; absent: none) with `server` added under
/// `mcpServers` and `hooks` (event: hook groups) appended to the user's own
/// hooks of each event; an error when they are not a JSON object (the lane
/// then runs with the user's settings as they are, without the tools).
pub(crate) fn settings_with_server(
    user: Option<&str>,
    server: &(String, Value),
    hooks: &serde_json::Map<String, Value>,
) -> Result<String, String> {
    let mut settings: Value = match user {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?
        }
        _ => json!({}),
    };
    let object = settings
        .as_object_mut()
        .ok_or_else(|| "not a JSON object".to_owned())?;
    let servers = object.entry("mcpServers").or_insert_with(|| json!({}));
    let servers = servers
        .as_object_mut()
        .ok_or_else(|| "mcpServers is not an object".to_owned())?;
    servers.insert(server.0.clone(), server.1.clone());
    if !hooks.is_empty() {
        let theirs = object.entry("hooks").or_insert_with(|| json!({}));
        let theirs = theirs
            .as_object_mut()
            .ok_or_else(|| "hooks is not an object".to_owned())?;
        for (event, groups) in hooks {
            let list = theirs.entry(event.clone()).or_insert_with(|| json!([]));
            let list = list
                .as_array_mut()
                .ok_or_else(|| format!("hooks.{event} is not a list"))?;
            list.extend(groups.as_array().into_iter().flatten().cloned());
        }
    }
    Ok(settings.to_string())
}

/// opencode: `OPENCODE_CONFIG_CONTENT`, merged over the user's config.
pub(super) fn opencode(plan: &mut CommandPlan, server: &McpServer) {
    let mut command = vec![server.program.clone()];
    command.extend(server.args.iter().cloned());
    let config = json!({"mcp": {SERVER: {
        "type": "local",
        "command": command,
        "environment": env_object(server),
        "enabled": true,
    }}});
    plan.env("OPENCODE_CONFIG_CONTENT", &config.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::cli::common::stdin_plan;

    fn server() -> McpServer {
        McpServer {
            program: "/bin/flotilla".into(),
            args: vec!["mcp".into(), "--as".into(), "w \"1\"".into()],
            env: vec![("FLOTILLA_PEER".into(), "w".into())],
        }
    }

    #[test]
    fn claude_gets_a_json_config_and_only_the_flotilla_tools() {
        let mut plan = stdin_plan("claude", &["-p"]);
        claude(&mut plan, &server());
        let config: Value = serde_json::from_str(&plan.argv[3]).expect("json");
        assert_eq!(config["mcpServers"]["flotilla"]["command"], "/bin/flotilla");
        assert_eq!(plan.argv[4..], ["--allowedTools", "mcp__flotilla"]);
    }

    #[test]
    fn codex_overrides_are_valid_toml() {
        let mut plan = stdin_plan("codex", &[]);
        codex(&mut plan, &server());
        for pair in plan.argv[1..].chunks(2) {
            assert_eq!(pair[0], "-c");
            let (key, value) = pair[1].split_once('=').expect("key=value");
            let doc = format!("{} = {value}", key.rsplit('.').next().unwrap_or(key));
            let parsed: toml::Table = toml::from_str(&doc).expect("toml");
            assert_eq!(parsed.len(), 1, "{doc}");
        }
        assert!(plan.argv.iter().any(|a| a.contains(r#""w \"1\"""#)));
    }

    #[test]
    fn gemini_and_qwen_get_a_private_home_linking_the_users() {
        let env = vec![("HOME".to_owned(), "/u".to_owned())];
        let mut plan = stdin_plan("gemini", &[]);
        gemini(&mut plan, &server(), &env, Path::new("/l"));
        assert_eq!(
            plan.env,
            [("GEMINI_CLI_HOME".into(), "/l/gemini-home".into())]
        );
        let home = plan.cli_home.expect("home");
        assert_eq!(home.dir, Path::new("/l/gemini-home/.gemini"));
        assert_eq!(home.source, Path::new("/u/.gemini"));
        assert_eq!(home.server.1["trust"], true);
        let mut plan = stdin_plan("qwen", &[]);
        let env = vec![("QWEN_HOME".to_owned(), "/q".to_owned())];
        qwen(&mut plan, &server(), &env, Path::new("/l"));
        assert_eq!(plan.env, [("QWEN_HOME".into(), "/l/qwen-home".into())]);
        assert_eq!(plan.cli_home.expect("home").source, Path::new("/q"));
    }

    #[test]
    fn the_users_settings_keep_everything_and_gain_the_server() {
        let entry = ("flotilla".to_owned(), json!({"command": "f"}));
        let user = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "mcpServers": {"mine": {"command": "m"}}}"#;
        let merged: Value = serde_json::from_str(
            &settings_with_server(Some(user), &entry, &Default::default()).expect("merge"),
        )
        .expect("json");
        assert_eq!(merged["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(merged["mcpServers"]["mine"]["command"], "m");
        assert_eq!(merged["mcpServers"]["flotilla"]["command"], "f");
        assert!(settings_with_server(None, &entry, &Default::default()).is_ok());
        assert!(settings_with_server(Some("// comment\n{}"), &entry, &Default::default()).is_err());
        assert!(settings_with_server(Some("[1]"), &entry, &Default::default()).is_err());
    }

    #[test]
    fn session_hooks_come_after_the_users_own() {
        let entry = ("flotilla".to_owned(), json!({"command": "f"}));
        let user = r#"{"hooks": {"Stop": [{"hooks": [{"command": "mine"}]}]}}"#;
        let ours =
            json!({"Stop": [{"hooks": [{"command": "ours"}]}], "PostToolUse": [{"hooks": []}]});
        let ours = ours.as_object().expect("object");
        let merged: Value =
            serde_json::from_str(&settings_with_server(Some(user), &entry, ours).expect("merge"))
                .expect("json");
        assert_eq!(merged["hooks"]["Stop"][0]["hooks"][0]["command"], "mine");
        assert_eq!(merged["hooks"]["Stop"][1]["hooks"][0]["command"], "ours");
        assert!(merged["hooks"]["PostToolUse"].is_array());
        let odd = r#"{"hooks": {"Stop": 1}}"#;
        assert!(settings_with_server(Some(odd), &entry, ours).is_err());
    }
}
