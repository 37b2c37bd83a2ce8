//! `flotilla send --batch`: many messages from stdin (one JSON object per
//! line), sent on one connection in pipelined mode with many in flight.
//!
//! Every line is read and checked before anything is sent, so a bad line
//! sends nothing. Each message gets its id here, before the first try: a
//! connection that breaks, or a daemon that restarts, only makes the
//! client send the unanswered messages again, in order, and the daemon
//! stores each once. Each message is answered on its own (one may be
//! refused while the rest are sent). When the daemon stays away, each
//! message left without an answer says it may be stored and names its id.

use std::io::BufRead;
use std::time::Duration;

use anyhow::{Context, Result};
use flotilla_actors::names::{MessageId, PeerName};
use flotilla_actors::protocol::{self, ErrorCode, SendReply};
use flotilla_host::client::{Answer, Unfinished, call_pipelined};
use serde::{Deserialize, Serialize};

use super::Env;
use crate::exit::{CliError, OK, control_code};
use crate::output::{self, outln};

/// Schema id of each `send --batch --json` line.
pub(crate) const BATCH_SCHEMA: &str = "flotilla.send-batch.v1";
/// How long the batch waits for a daemon that went away, from its last
/// answer.
const PATIENCE: Duration = Duration::from_secs(15);

/// One line of the input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    to: Targets,
    body: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

/// `"b"` or `["b", "work/c"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Targets {
    One(String),
    Many(Vec<String>),
}

/// One line of the output (`--json`).
#[derive(Debug, Serialize)]
struct BatchAnswer<'a> {
    /// The input line, from 1.
    line: usize,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a SendReply>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a protocol::ControlError>,
}

pub(crate) async fn send(env: &Env, sender: PeerName, in_flight: usize) -> Result<u8> {
    let (lines, ops) = read_batch(&sender, std::io::stdin().lock())?;
    let total = ops.len();
    let waiting = crate::progress::Waiting::start(format!("sending {total} message(s)"));
    let answers = call_pipelined(&env.home, &ops, in_flight, PATIENCE, |p| {
        if p.answered % 256 == 0 {
            waiting.set_message(format!("sent {} of {total} message(s)", p.answered));
        }
    })
    .await;
    drop(waiting);
    let (answers, in_doubt) = match answers {
        Ok(answers) => (answers, vec![false; total]),
        Err(unfinished) => unanswered(unfinished, &ops),
    };
    report(env, &sender, &lines, &answers, &in_doubt)
}

/// The answers of a batch whose daemon went away and stayed away: each
/// message without an answer is refused as `unavailable`, saying it may
/// be stored and naming its id (`details.id`) to send it again with.
/// Also says which of them had no answer.
fn unanswered(
    unfinished: Unfinished<SendReply>,
    ops: &[protocol::SendArgs],
) -> (Vec<Answer<SendReply>>, Vec<bool>) {
    let why = unfinished.error.to_string();
    let no_answer = |op: &protocol::SendArgs| {
        let id = op.id.as_ref().map(ToString::to_string).unwrap_or_default();
        protocol::ControlError::new(
            ErrorCode::Unavailable,
            format!("no answer, and this message may be stored already: {why}"),
        )
        .with_hint(format!(
            "once a daemon runs (`flotilla up`), send it again with \"id\": \"{id}\": \
             a message is stored once per id"
        ))
        .with_details(serde_json::json!({ "id": id }))
    };
    unfinished
        .answers
        .into_iter()
        .zip(ops)
        .map(|(answer, op)| match answer {
            Some(answer) => (answer, false),
            None => (Err(no_answer(op)), true),
        })
        .unzip()
}

/// The ops of every non-empty line of `input`, with the line numbers.
fn read_batch(
    sender: &PeerName,
    input: impl BufRead,
) -> Result<(Vec<usize>, Vec<protocol::SendArgs>)> {
    let (mut lines, mut ops) = (Vec::new(), Vec::new());
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.with_context(|| format!("cannot read line {number} of stdin"))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| {
            CliError::usage(
                format!("line {number} of the batch: {why}; nothing was sent"),
                r#"each line is one JSON object: {"to": ["reviewer"], "body": "text", "summary": "optional", "id": "optional"}"#,
            )
        };
        let parsed: BatchLine = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
        let id = match parsed.id {
            Some(id) => MessageId::new(&id).map_err(|e| bad(e.to_string()))?,
            None => MessageId::generate(),
        };
        let to = match parsed.to {
            Targets::One(t) => vec![t],
            Targets::Many(t) => t,
        };
        if to.is_empty() {
            return Err(bad("`to` names no target".into()));
        }
        lines.push(number);
        ops.push(protocol::SendArgs {
            as_peer: sender.clone(),
            to,
            summary: parsed.summary,
            body: parsed.body,
            id: Some(id),
        });
    }
    Ok((lines, ops))
}

fn report(
    env: &Env,
    sender: &PeerName,
    lines: &[usize],
    answers: &[Answer<SendReply>],
    in_doubt: &[bool],
) -> Result<u8> {
    let mut code = OK;
    let (mut refused, mut doubtful) = (0, 0);
    for ((line, answer), &doubt) in lines.iter().zip(answers).zip(in_doubt) {
        if let Err(e) = answer {
            if doubt {
                doubtful += 1;
            } else {
                refused += 1;
            }
            if code == OK {
                code = control_code(e);
            }
            if !env.json {
                let hint = e
                    .hint
                    .as_deref()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                let what = if doubt { "" } else { "not sent: " };
                eprintln!("line {line}: {what}{}{hint}", e.message);
            }
        }
        if env.json {
            let (result, error) = match answer {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e)),
            };
            let ok = result.is_some();
            let line = *line;
            output::json_line_as(
                BATCH_SCHEMA,
                &BatchAnswer {
                    line,
                    ok,
                    result,
                    error,
                },
            )?;
        }
    }
    if !env.json {
        let sent = answers.len() - refused - doubtful;
        let doubt = match doubtful {
            0 => String::new(),
            n => format!("; {n} without an answer (may be stored: send them again with their ids)"),
        };
        outln!("sent {sent} message(s) as {sender}; {refused} not sent{doubt}")?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_sends_with_fixed_ids_and_a_bad_line_names_itself() {
        let sender = PeerName::new("lead").expect("name");
        let input = "{\"to\":\"b\",\"body\":\"one\"}\n\n{\"to\":[\"b\",\"w/c\"],\"body\":\"two\",\"id\":\"m-2\"}\n";
        let (lines, ops) = read_batch(&sender, input.as_bytes()).expect("batch");
        assert_eq!(lines, [1, 3]);
        assert_eq!(ops[0].to, ["b"]);
        assert!(ops[0].id.is_some(), "an id is fixed before the first try");
        assert_eq!(ops[1].id.as_ref().map(|i| i.as_str()), Some("m-2"));
        let bad = "{\"to\":\"b\",\"body\":\"one\"}\n{\"to\":\"b\",\"text\":\"x\"}\n";
        let err = read_batch(&sender, bad.as_bytes()).expect_err("bad line");
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(err.to_string().contains("nothing was sent"), "{err}");
    }
}
