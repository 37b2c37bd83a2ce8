//! The per-CLI config files of a [`super::VendorEnv`]: each points its CLI
//! at the model server and turns off telemetry, update checks, auto-update,
//! retries, trust prompts and onboarding by the CLI's own settings.

use std::path::Path;

use serde_json::{Value, json};

/// The env var holding the key Codex sends (its provider's `env_key`).
pub(super) const CODEX_KEY_VAR: &str = "MODEL_SERVER_API_KEY";

/// Writes every CLI's config files under `home`.
pub(super) fn write_all(home: &Path, base_url: &str) {
    write(home, ".codex/config.toml", &codex(base_url));
    write_json(home, ".qwen/settings.json", &qwen());
    write_json(home, ".gemini/settings.json", &gemini());
    write_json(home, ".pi/agent/models.json", &pi_models(base_url));
    write_json(home, ".pi/agent/settings.json", &pi_settings());
    write_json(home, ".config/opencode/opencode.json", &opencode(base_url));
    // opencode's own plugin installer reads npm's registry setting: a dead
    // loopback port makes it fail at once, on the machine.
    write(
        home,
        ".npmrc",
        "registry=http://127.0.0.1:9/\nupdate-notifier=false\n",
    );
}

fn write(home: &Path, rel: &str, text: &str) {
    let path = home.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create config dir");
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn write_json(home: &Path, rel: &str, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("JSON");
    write(home, rel, &text);
}

/// `$CODEX_HOME/config.toml`: a `responses` provider on the server, no
/// retries, no update check, no plugin sync, no analytics or feedback.
fn codex(base_url: &str) -> String {
    format!(
        r#"model = "gpt-5.5"
model_provider = "model-server"
check_for_update_on_startup = false

[model_providers.model-server]
name = "model-server"
base_url = "{base_url}/v1"
env_key = "{CODEX_KEY_VAR}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"#
    )
}

/// `~/.qwen/settings.json`: OpenAI auth (endpoint from the env), no folder
/// trust, usage statistics, telemetry, auto-update, managed memory (a second
/// model call per turn) or SDK retries.
fn qwen() -> Value {
    json!({
        "$version": 4,
        "security": { "auth": { "selectedType": "openai" }, "folderTrust": { "enabled": false } },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "general": { "enableAutoUpdate": false },
        "memory": { "enableManagedAutoMemory": false },
        "model": { "name": "fake-model", "generationConfig": { "maxRetries": 0 } },
    })
}

/// `~/.gemini/settings.json`: API-key auth (endpoint from the env), no
/// folder trust, usage statistics, telemetry, auto-update or retries.
fn gemini() -> Value {
    json!({
        "security": { "auth": { "selectedType": "gemini-api-key" }, "folderTrust": { "enabled": false } },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "general": {
            "enableAutoUpdate": false, "enableAutoUpdateNotification": false,
            "maxAttempts": 1, "retryFetchErrors": false,
        },
    })
}

/// `~/.pi/agent/models.json`: provider `fake` (Chat Completions, model
/// `fake-model`) and `fakeant` (Anthropic Messages, model `claude-fake`).
fn pi_models(base_url: &str) -> Value {
    let free = json!({ "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 });
    json!({
        "providers": {
            "fake": {
                "baseUrl": format!("{base_url}/v1"),
                "api": "openai-completions",
                "apiKey": "sk-fake",
                "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
                "models": [{ "id": "fake-model", "name": "Fake", "reasoning": false,
                             "input": ["text"], "contextWindow": 128_000, "maxTokens": 8192,
                             "cost": free }],
            },
            "fakeant": {
                "baseUrl": base_url,
                "api": "anthropic-messages",
                "apiKey": "sk-ant-fake",
                "models": [{ "id": "claude-fake", "name": "Fake Claude", "reasoning": false,
                             "input": ["text"], "contextWindow": 200_000, "maxTokens": 8192,
                             "cost": free }],
            },
        }
    })
}

/// `~/.pi/agent/settings.json`: no install telemetry, quiet, no retries.
fn pi_settings() -> Value {
    json!({
        "enableInstallTelemetry": false,
        "quietStartup": true,
        "retry": { "enabled": false, "provider": { "maxRetries": 0 } },
    })
}

/// `$XDG_CONFIG_HOME/opencode/opencode.json`: an OpenAI-compatible provider
/// `fake` with model `fake-model`, no auto-update, no sharing.
fn opencode(base_url: &str) -> Value {
    json!({
        "autoupdate": false,
        "share": "disabled",
        "model": "fake/fake-model",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": { "baseURL": format!("{base_url}/v1"), "apiKey": "sk-fake" },
                "models": { "fake-model": { "name": "Fake model" } },
            }
        }
    })
}
