//! The model table: each model's context window in tokens, for the CLIs
//! whose output does not tell it (Gemini CLI, Qwen Code, pi, opencode,
//! Grok CLI). Built-in figures for well-known model families, extended or
//! overridden by `config.toml`'s `[context_windows]`, and a default per CLI
//! when neither knows the model. Pure: it reads no output and no files.

use std::collections::BTreeMap;

use flotilla_actors::lane::CliKind;
use serde::{Deserialize, Serialize};

/// Published context windows of well-known model families, by the start
/// of the model's name (the longest matching start wins).
const BUILT_IN: &[(&str, u64)] = &[
    ("gemini-2.0", 1_048_576),
    ("gemini-2.5", 1_048_576),
    ("gemini-3", 1_048_576),
    ("qwen3-coder", 262_144),
    ("qwen3-coder-plus", 1_000_000),
    ("qwen3-coder-flash", 1_000_000),
    ("grok-code-fast", 256_000),
    ("grok-4", 256_000),
    ("grok-3", 131_072),
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
];

/// The window of a lane whose model neither the table nor config knows.
pub(crate) fn cli_default(cli: CliKind) -> u64 {
    match cli {
        CliKind::Gemini => 1_048_576,
        CliKind::Qwen => 131_072,
        CliKind::Grok => 256_000,
        CliKind::Claude => 200_000,
        CliKind::Codex => 272_000,
        CliKind::Pi | CliKind::Opencode | CliKind::Exec => 128_000,
    }
}

/// `[context_windows]`: model name (or the start of one) to its window in
/// tokens, over the built-in table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContextWindows(BTreeMap<String, u64>);

impl ContextWindows {
    /// A table with `entries` over the built-in ones.
    pub fn new(entries: impl IntoIterator<Item = (String, u64)>) -> Self {
        Self(entries.into_iter().collect())
    }

    /// Every entry is a non-empty name and a positive number of tokens;
    /// the error names the key that is not.
    pub fn check(&self) -> Result<(), String> {
        for (model, tokens) in &self.0 {
            if model.trim().is_empty() {
                return Err("context_windows: a model name is empty; name the model, \
                            as in \"my-local-model\" = 32768\n"
                    .into());
            }
            if *tokens == 0 {
                return Err(format!(
                    "context_windows.\"{model}\" = 0: a context window is a positive \
                     number of tokens, as in \"{model}\" = 32768\n"
                ));
            }
        }
        Ok(())
    }

    /// The window of `model` as a lane of `cli` runs it: config's entry or
    /// the built-in one whose name starts the model's (with or without a
    /// `provider/` part; the longest start wins, config's on a tie), else
    /// the CLI's default.
    pub(crate) fn window(&self, cli: CliKind, model: Option<&str>) -> u64 {
        model
            .and_then(|m| self.known(m))
            .unwrap_or(cli_default(cli))
    }

    /// The window of `model`, if the table knows it.
    pub(crate) fn known(&self, model: &str) -> Option<u64> {
        let full = model.trim().to_lowercase();
        let bare = full.rsplit('/').next().unwrap_or(&full).to_owned();
        let configured = self.0.iter().map(|(k, v)| (k.to_lowercase(), *v, 1));
        let built_in = BUILT_IN.iter().map(|(k, v)| ((*k).to_owned(), *v, 0));
        configured
            .chain(built_in)
            .filter(|(key, ..)| full.starts_with(key.as_str()) || bare.starts_with(key.as_str()))
            .max_by_key(|(key, _, rank)| (key.len(), *rank))
            .map(|(_, tokens, _)| tokens)
    }
}

/// A turn parser's view of its lane's model: the lane's `-m`, replaced by
/// the model the CLI says it runs (the real name where `-m` was an alias
/// or absent), and the table to find its window in.
#[derive(Debug, Clone)]
pub(super) struct ModelWindow {
    cli: CliKind,
    table: ContextWindows,
    model: Option<String>,
}

impl ModelWindow {
    /// The window of a lane of `cli` running `model`.
    pub(super) fn new(cli: CliKind, model: Option<&str>, table: &ContextWindows) -> Self {
        Self {
            cli,
            table: table.clone(),
            model: model.map(str::to_owned),
        }
    }

    /// The CLI said which model it runs.
    pub(super) fn saw(&mut self, model: Option<&str>) {
        if let Some(m) = model.filter(|m| !m.trim().is_empty()) {
            self.model = Some(m.to_owned());
        }
    }

    /// The window in tokens.
    pub(super) fn tokens(&self) -> u64 {
        self.table.window(self.cli, self.model.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(&str, u64)]) -> ContextWindows {
        ContextWindows::new(entries.iter().map(|(k, v)| ((*k).to_owned(), *v)))
    }

    #[test]
    fn built_in_families_by_the_longest_start() {
        let t = ContextWindows::default();
        assert_eq!(t.known("gemini-2.5-flash"), Some(1_048_576));
        assert_eq!(t.known("qwen3-coder-480b-a35b-instruct"), Some(262_144));
        assert_eq!(t.known("qwen3-coder-plus"), Some(1_000_000));
        assert_eq!(t.known("grok-code-fast-1"), Some(256_000));
        assert_eq!(t.known("anthropic/claude-sonnet-4-5"), Some(200_000));
        assert_eq!(t.known("Gemini-2.5-Pro"), Some(1_048_576));
        assert_eq!(t.known("fake-model"), None);
    }

    #[test]
    fn config_extends_and_overrides_and_the_cli_default_is_last() {
        let t = table(&[("fake-model", 32_768), ("gemini-2.5", 500_000)]);
        assert_eq!(t.window(CliKind::Pi, Some("fake/fake-model")), 32_768);
        assert_eq!(t.window(CliKind::Qwen, Some("fake-model-2")), 32_768);
        assert_eq!(t.window(CliKind::Gemini, Some("gemini-2.5-pro")), 500_000);
        assert_eq!(t.window(CliKind::Gemini, Some("gemini-3-pro")), 1_048_576);
        assert_eq!(t.window(CliKind::Opencode, Some("local/other")), 128_000);
        assert_eq!(t.window(CliKind::Qwen, None), 131_072);
    }

    #[test]
    fn zero_and_empty_names_are_refused_by_name() {
        assert!(table(&[("m", 1)]).check().is_ok());
        let err = table(&[("my-model", 0)]).check().expect_err("zero");
        assert!(err.contains("context_windows.\"my-model\""), "{err}");
        let err = table(&[(" ", 5)]).check().expect_err("empty");
        assert!(err.contains("empty"), "{err}");
    }
}
