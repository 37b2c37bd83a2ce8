//! Finding a CLI's own tools in a model request, and calling them with that
//! tool's argument names. Each CLI names its file-writing and shell tools
//! differently (Claude `Write`/`Bash`, Codex `apply_patch`/`exec_command`,
//! Qwen and Gemini `write_file`/`run_shell_command`, pi and opencode
//! `write`/`bash`, Grok `create_file`/`bash`) and spells the path argument
//! differently (`file_path`, `filePath`, `path`).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::Api;
use super::wire::{CallInput, ToolCall};

/// File-writing tools, by the name the model must call.
const WRITE_TOOLS: &[&str] = &["Write", "write_file", "write", "create_file", "apply_patch"];
/// Shell tools, by the name the model must call.
const SHELL_TOOLS: &[&str] = &["Bash", "run_shell_command", "exec_command", "bash", "shell"];
/// Argument names that hold a file's path, most specific first.
const PATH_ARGS: &[&str] = &["file_path", "filePath", "path"];
/// Argument names that hold a command line.
const COMMAND_ARGS: &[&str] = &["command", "cmd"];

/// One tool a request offers.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolDef {
    pub(super) name: String,
    /// A freeform (custom) tool: its input is raw text, not JSON.
    pub(super) freeform: bool,
    /// Its parameters' names.
    pub(super) params: Vec<String>,
}

/// The tools a request offers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Offered(pub(super) Vec<ToolDef>);

impl Offered {
    /// Reads the `tools` of a request body in `api`'s shape.
    pub(super) fn from_request(api: Api, body: &Value) -> Self {
        let list = body.get("tools").and_then(Value::as_array);
        let defs = list.into_iter().flatten();
        let tools = match api {
            Api::Anthropic => defs.filter_map(|t| def(t, "input_schema", false)).collect(),
            Api::Responses => defs.flat_map(responses_defs).collect(),
            Api::Chat => defs
                .filter_map(|t| def(t.get("function")?, "parameters", false))
                .collect(),
            Api::Gemini => defs
                .filter_map(|t| t.get("functionDeclarations")?.as_array())
                .flatten()
                .filter_map(|d| {
                    let key = if d.get("parametersJsonSchema").is_some() {
                        "parametersJsonSchema"
                    } else {
                        "parameters"
                    };
                    def(d, key, false)
                })
                .collect(),
        };
        Self(tools)
    }

    fn get(&self, name: &str) -> Option<&ToolDef> {
        self.0.iter().find(|t| t.name == name)
    }

    /// The first offered tool among `names` (in the order of `names`).
    fn first_of(&self, names: &[&str]) -> Option<&ToolDef> {
        names.iter().find_map(|n| self.get(n))
    }

    fn names(&self) -> String {
        let names: Vec<_> = self.0.iter().map(|t| t.name.as_str()).collect();
        names.join(", ")
    }
}

/// The tools of one Responses entry: a function or custom tool, or each
/// tool of a `namespace` (Codex groups an MCP server's tools in one), named
/// `NAMESPACE.TOOL` (a dot is never part of a tool's own name).
fn responses_defs(t: &Value) -> Vec<ToolDef> {
    let kind = t.get("type").and_then(Value::as_str);
    if kind == Some("namespace") {
        let ns = t.get("name").and_then(Value::as_str).unwrap_or_default();
        let nested = t.get("tools").and_then(Value::as_array);
        return nested
            .into_iter()
            .flatten()
            .filter_map(|n| def(n, "parameters", false))
            .map(|mut d| {
                d.name = format!("{ns}.{}", d.name);
                d
            })
            .collect();
    }
    def(t, "parameters", kind == Some("custom"))
        .into_iter()
        .collect()
}

/// A tool definition whose schema sits under `schema_key`.
fn def(tool: &Value, schema_key: &str, freeform: bool) -> Option<ToolDef> {
    let name = tool.get("name")?.as_str()?.to_owned();
    let params = tool
        .get(schema_key)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    Some(ToolDef {
        name,
        freeform,
        params,
    })
}

/// The first of `candidates` that `tool` takes, else the first candidate.
fn param<'a>(tool: &ToolDef, candidates: &[&'a str]) -> &'a str {
    candidates
        .iter()
        .find(|c| tool.params.iter().any(|p| p == *c))
        .unwrap_or(&candidates[0])
}

/// A call of the offered file-writing tool; `Err` is a text saying why not.
pub(super) fn write_file(
    offered: &Offered,
    path: &Path,
    content: &str,
) -> Result<ToolCall, String> {
    let tool = offered.first_of(WRITE_TOOLS).ok_or_else(|| {
        format!(
            "model-server: no file-writing tool offered (tools: {})",
            offered.names()
        )
    })?;
    let path = path.to_string_lossy();
    if tool.name == "apply_patch" {
        let patch = add_file_patch(&path, content);
        let input = if tool.freeform {
            CallInput::Freeform(patch)
        } else {
            CallInput::Json(json!({ param(tool, &["input", "patch"]): patch }))
        };
        return Ok(ToolCall {
            name: tool.name.clone(),
            input,
        });
    }
    let mut args = Map::new();
    args.insert(param(tool, PATH_ARGS).into(), path.as_ref().into());
    args.insert("content".into(), content.into());
    Ok(ToolCall {
        name: tool.name.clone(),
        input: CallInput::Json(Value::Object(args)),
    })
}

/// A Codex patch that adds the file `path` holding `content`.
pub(super) fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in content.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// A call of the offered shell tool; `Err` is a text saying why not.
pub(super) fn shell(offered: &Offered, command: &str) -> Result<ToolCall, String> {
    let tool = offered.first_of(SHELL_TOOLS).ok_or_else(|| {
        format!(
            "model-server: no shell tool offered (tools: {})",
            offered.names()
        )
    })?;
    let mut args = Map::new();
    args.insert(param(tool, COMMAND_ARGS).into(), command.into());
    if tool.params.iter().any(|p| p == "description") {
        args.insert("description".into(), "Run a command".into());
    }
    Ok(ToolCall {
        name: tool.name.clone(),
        input: CallInput::Json(Value::Object(args)),
    })
}

/// A call of the MCP tool `name` of `server`, under whatever name the CLI
/// advertised it; `Err` is a text saying why not.
pub(super) fn mcp(
    offered: &Offered,
    server: &str,
    name: &str,
    args: &Value,
) -> Result<ToolCall, String> {
    let found = offered.0.iter().find(|t| {
        let n = t.name.as_str();
        n.contains(server)
            && [".", "__", "_"]
                .iter()
                .any(|sep| n.ends_with(&format!("{sep}{name}")))
    });
    let found = found.or_else(|| offered.get(name)).ok_or_else(|| {
        format!(
            "model-server: no tool {name} of MCP server {server} offered (tools: {})",
            offered.names()
        )
    })?;
    Ok(ToolCall {
        name: found.name.clone(),
        input: CallInput::Json(args.clone()),
    })
}

/// A call of `name` with `args`, offered or not; a freeform tool gets a
/// string `args` as its raw input.
pub(super) fn named(offered: &Offered, name: &str, args: &Value) -> ToolCall {
    let freeform = offered.get(name).is_some_and(|t| t.freeform);
    let input = match (freeform, args) {
        (true, Value::String(text)) => CallInput::Freeform(text.clone()),
        _ => CallInput::Json(args.clone()),
    };
    ToolCall {
        name: name.to_owned(),
        input,
    }
}
