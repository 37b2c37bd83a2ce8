//! The keys of `config.toml` for `flotilla config get|set|unset`: which
//! keys exist (read from the config types themselves, so the list never
//! drifts), a key's effective value (the file's, else the default), and
//! edits of the file's text that keep its comments and layout and are
//! checked by the same parser the daemon uses before anything is written.
//!
//! Pure: text in, text out. Reading and writing the file is the caller's.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use toml_edit::{DocumentMut, Item, Value};

use super::{HostConfig, HubServerConfig};

/// A key that cannot be read or set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No such key.
    #[error("config.toml has no key `{key}`{}", suggestion(.near))]
    Unknown {
        /// The key asked for.
        key: String,
        /// The closest known key, if any is close.
        near: Option<String>,
    },
    /// The value makes the file invalid.
    #[error("`{key} = {value}` is not valid: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What the config parser said.
        reason: String,
    },
    /// The file itself does not parse.
    #[error("config.toml does not parse: {0}")]
    Unreadable(String),
}

fn suggestion(near: &Option<String>) -> String {
    near.as_ref()
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_else(|| "; `flotilla config show` lists every key".to_owned())
}

/// Every key, top-level ones first, then `hub_server.KEY`.
pub fn known_keys() -> Vec<String> {
    let mut keys: Vec<String> = fields::<HostConfig>()
        .iter()
        .map(|f| f.to_string())
        .collect();
    keys.extend(
        fields::<HubServerConfig>()
            .iter()
            .map(|f| format!("hub_server.{f}")),
    );
    keys
}

/// Checks that `key` exists (a table like `hub_server` is not a key).
pub fn check_key(key: &str) -> Result<(), KeyError> {
    let keys = known_keys();
    if keys.iter().any(|k| k == key) && key != "hub_server" {
        return Ok(());
    }
    let near = keys
        .into_iter()
        .filter(|k| k != "hub_server")
        .map(|k| (strsim::jaro_winkler(key, &k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k);
    Err(KeyError::Unknown {
        key: key.to_owned(),
        near,
    })
}

/// The effective value of `key`: from the file's text, else the default
/// (`None`: not set and no default, like `hub`). `true` when the file sets it.
pub fn get(text: &str, key: &str) -> Result<(Option<toml::Value>, bool), KeyError> {
    check_key(key)?;
    let (effective, in_file) = read(text)?;
    Ok((lookup(&effective, key), lookup(&in_file, key).is_some()))
}

/// Every key (as [`known_keys`], without the `hub_server` table itself)
/// with its effective value and whether the file sets it, read once.
pub fn values(text: &str) -> Result<Vec<(String, Option<toml::Value>, bool)>, KeyError> {
    let (effective, in_file) = read(text)?;
    Ok(known_keys()
        .into_iter()
        .filter(|k| k != "hub_server")
        .map(|k| {
            let value = lookup(&effective, &k);
            let set = lookup(&in_file, &k).is_some();
            (k, value, set)
        })
        .collect())
}

/// The effective config and the file's own keys, as TOML values.
fn read(text: &str) -> Result<(toml::Value, toml::Value), KeyError> {
    let config = HostConfig::parse(text).map_err(|e| KeyError::Unreadable(e.trim().to_owned()))?;
    let effective =
        toml::Value::try_from(&config).map_err(|e| KeyError::Unreadable(e.to_string()))?;
    let in_file: toml::Table = toml::from_str(text).unwrap_or_default();
    Ok((effective, toml::Value::Table(in_file)))
}

fn lookup(root: &toml::Value, key: &str) -> Option<toml::Value> {
    key.split('.')
        .try_fold(root, |v, part| v.get(part))
        .cloned()
}

/// The file's text with `key` set to `raw`: a TOML value (`30`, `true`,
/// `["a", "b"]`, `"text"`), or, when it is not one or the key wants text,
/// the text itself. The result must parse as a whole.
pub fn set(text: &str, key: &str, raw: &str) -> Result<String, KeyError> {
    check_key(key)?;
    let mut first = None;
    for value in candidates(raw) {
        let edited = put(text, key, Some(value))?;
        match HostConfig::parse(&edited) {
            Ok(_) => return Ok(edited),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(KeyError::Invalid {
        key: key.to_owned(),
        value: raw.to_owned(),
        reason: first.unwrap_or_default().trim().to_owned(),
    })
}

/// The file's text without `key` (its default applies again).
pub fn unset(text: &str, key: &str) -> Result<String, KeyError> {
    check_key(key)?;
    let edited = put(text, key, None)?;
    HostConfig::parse(&edited).map_err(|reason| KeyError::Invalid {
        key: key.to_owned(),
        value: "(unset)".to_owned(),
        reason: reason.trim().to_owned(),
    })?;
    Ok(edited)
}

fn candidates(raw: &str) -> Vec<Value> {
    let text = Value::from(raw);
    match raw.parse::<Value>() {
        Ok(v) if v.is_str() => vec![v],
        Ok(v) => vec![v, text],
        Err(_) => vec![text],
    }
}

fn put(text: &str, key: &str, value: Option<Value>) -> Result<String, KeyError> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| KeyError::Unreadable(e.message().to_owned()))?;
    let (table, leaf) = match key.split_once('.') {
        Some((outer, leaf)) => {
            let entry = doc.entry(outer).or_insert(toml_edit::table());
            match entry.as_table_mut() {
                Some(t) => (t, leaf),
                None => return Err(KeyError::Unreadable(format!("`{outer}` is not a table"))),
            }
        }
        None => (doc.as_table_mut(), key),
    };
    match value {
        Some(v) => {
            table.insert(leaf, Item::Value(v));
        }
        None => {
            table.remove(leaf);
        }
    }
    Ok(doc.to_string())
}

/// The field names of a struct that derives `Deserialize`: serde hands
/// them to the deserializer, which stops right there.
fn fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(&'static [&'static str]);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> Deserializer<'de> for &mut Fields {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let mut found = Fields(&[]);
    let _ = T::deserialize(&mut found);
    found.0
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
