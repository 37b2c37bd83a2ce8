//! `flotilla config show|path|get|set|unset`: config.toml read and edited
//! directly (no daemon needed; the daemon reads the file when it starts).
//! The keys, their defaults and the checks are `flotilla_host::config::keys`';
//! this module only reads and writes the file and prints.
//!
//! JSON: `flotilla.config.v1` (`path`, `exists`, `keys[]` of `key`,
//! `value`, `source`: `file`, `default` or `unset`), `flotilla.config.path.v1`
//! (`path`, `exists`), `flotilla.config.value.v1` (`key`, `value`,
//! `source`), `flotilla.config.set.v1` (`path`, `key`, `value`, `previous`).

use std::path::Path;

use anyhow::Result;
use flotilla_host::config::keys::{self, KeyError};
use serde_json::{Value, json};

use super::Env;
use crate::args::ConfigCommand;
use crate::exit::{CliError, FAILED, NOT_FOUND, OK, USAGE};
use crate::output::outln;

const APPLY: &str =
    "the daemon reads config.toml when it starts: `flotilla down && flotilla up` applies it";

pub(crate) fn run(env: &Env, cmd: ConfigCommand) -> Result<u8> {
    let path = env.home.config_file.clone();
    let text = read(&path)?;
    match cmd {
        ConfigCommand::Path => {
            let exists = path.exists();
            if env.json {
                outln!(
                    "{}",
                    json!({"schema": "flotilla.config.path.v1", "path": path, "exists": exists})
                )?;
            } else {
                outln!("{}", path.display())?;
            }
        }
        ConfigCommand::Show => show(env.json, &path, text.as_deref().unwrap_or(""))?,
        ConfigCommand::Get { key } => get(env.json, text.as_deref().unwrap_or(""), &key)?,
        ConfigCommand::Set { key, value } => {
            let before = text.unwrap_or_default();
            let edited = keys::set(&before, &key, &value).map_err(key_error)?;
            write(env.json, &path, &before, &edited, &key)?;
        }
        ConfigCommand::Unset { key } => {
            let before = text.unwrap_or_default();
            let edited = keys::unset(&before, &key).map_err(key_error)?;
            write(env.json, &path, &before, &edited, &key)?;
        }
    }
    Ok(OK)
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// config.toml's text; empty when it does not exist (the defaults apply).
pub(crate) fn read_text(path: &Path) -> Result<String> {
    Ok(read(path)?.unwrap_or_default())
}

/// Replaces config.toml with `text`: written whole to a private (0600)
/// staging file, then renamed over it, so no reader sees half a file.
pub(crate) fn replace_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let staging = path.with_extension("toml.editing");
    flotilla_actors::private_file::write(&staging, text.as_bytes())?;
    std::fs::rename(&staging, path)?;
    Ok(())
}

pub(crate) fn key_error(e: KeyError) -> anyhow::Error {
    let (code, hint) = match &e {
        KeyError::Unknown { .. } => (USAGE, "`flotilla config show` lists every key"),
        KeyError::Invalid { .. } => (USAGE, "docs/config.md gives each key's values"),
        KeyError::Unreadable(_) => (
            FAILED,
            "fix the file by hand: `flotilla config path` says where it is",
        ),
    };
    CliError {
        code,
        message: e.to_string(),
        hint: Some(hint.to_owned()),
    }
    .into()
}

/// Each key's value and where it comes from (the hub's keys only where
/// this home runs a hub).
fn entries(text: &str) -> Result<Vec<(String, Option<toml::Value>, &'static str)>> {
    let all = keys::values(text).map_err(key_error)?;
    let hub = all
        .iter()
        .any(|(k, v, _)| k == "hub_server.name" && v.is_some());
    Ok(all
        .into_iter()
        .filter(|(k, _, _)| hub || !k.starts_with("hub_server."))
        .map(|(key, value, in_file)| {
            let source = match (&value, in_file) {
                (_, true) => "file",
                (Some(_), false) => "default",
                (None, false) => "unset",
            };
            (key, value, source)
        })
        .collect())
}

fn json_value(v: &Option<toml::Value>) -> Value {
    v.as_ref()
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or(Value::Null)
}

fn show(json: bool, path: &Path, text: &str) -> Result<()> {
    let entries = entries(text)?;
    if json {
        let keys: Vec<Value> = entries
            .iter()
            .map(|(k, v, s)| json!({"key": k, "value": json_value(v), "source": s}))
            .collect();
        let out = json!({"schema": "flotilla.config.v1", "path": path, "exists": path.exists(), "keys": keys});
        outln!("{out}")?;
        return Ok(());
    }
    outln!("# {} ({APPLY})", path.display())?;
    for (key, value, source) in &entries {
        match value {
            Some(v) if *source == "default" => outln!("{key} = {v}  # default")?,
            Some(v) => outln!("{key} = {v}")?,
            None => outln!("# {key}: not set")?,
        }
    }
    Ok(())
}

fn get(json: bool, text: &str, key: &str) -> Result<()> {
    let (value, in_file) = keys::get(text, key).map_err(key_error)?;
    let Some(value) = value else {
        return Err(CliError {
            code: NOT_FOUND,
            message: format!("`{key}` is not set and has no default"),
            hint: Some(format!("set it with `flotilla config set {key} VALUE`")),
        }
        .into());
    };
    if json {
        let source = if in_file { "file" } else { "default" };
        let out = json!({"schema": "flotilla.config.value.v1", "key": key, "value": json_value(&Some(value)), "source": source});
        outln!("{out}")?;
    } else if let toml::Value::String(s) = &value {
        outln!("{s}")?;
    } else {
        outln!("{value}")?;
    }
    Ok(())
}

fn write(json: bool, path: &Path, before: &str, edited: &str, key: &str) -> Result<()> {
    replace_file(path, edited)?;
    let (previous, _) = keys::get(before, key).map_err(key_error)?;
    let (value, _) = keys::get(edited, key).map_err(key_error)?;
    if json {
        let out = json!({"schema": "flotilla.config.set.v1", "path": path, "key": key,
            "value": json_value(&value), "previous": json_value(&previous)});
        outln!("{out}")?;
    } else {
        let show =
            |v: &Option<toml::Value>| v.as_ref().map_or("not set".to_owned(), ToString::to_string);
        outln!(
            "{key} = {} (was {}) in {}",
            show(&value),
            show(&previous),
            path.display()
        )?;
        crate::verbosity::note!("{APPLY}");
    }
    Ok(())
}
