//! `--cli exec`: a plain command. The prompt goes to its stdin; each line of
//! its stdout is a `message` event; the result is its stdout; exit 0 is
//! completed, anything else failed (with the end of stderr as the error).

use flotilla_actors::lane::events::{EventKind, clip};
use flotilla_actors::lane::{CliKind, LaneSpec};

use super::{CliConnector, CommandPlan, Outcome, TurnContext, TurnParser, tail};

/// Largest result kept from stdout.
const MAX_RESULT: usize = 64 * 1024;

/// The exec connector.
#[derive(Debug)]
pub(super) struct Exec;

impl CliConnector for Exec {
    fn kind(&self) -> CliKind {
        CliKind::Exec
    }

    fn program(&self) -> &'static str {
        "sh"
    }

    fn supports_resume(&self) -> bool {
        true
    }

    fn command(&self, turn: &TurnContext<'_>) -> Result<CommandPlan, String> {
        if turn.spec.args.is_empty() {
            return Err("--cli exec needs the command after --, for example: flotilla lane run --cli exec -- make test".into());
        }
        Ok(CommandPlan {
            argv: turn.spec.args.clone(),
            env: Vec::new(),
            stdin_prompt: true,
            notes: Vec::new(),
            cli_home: None,
        })
    }

    fn parser(&self, _: &LaneSpec, _: &super::ContextWindows) -> Box<dyn TurnParser> {
        Box::new(ExecParser::default())
    }
}

#[derive(Debug, Default)]
struct ExecParser {
    stdout: String,
}

impl TurnParser for ExecParser {
    fn line(&mut self, line: &str) -> Vec<EventKind> {
        if self.stdout.len() < MAX_RESULT {
            self.stdout.push_str(line);
            self.stdout.push('\n');
        }
        vec![EventKind::Message {
            text: clip(line, 8 * 1024),
        }]
    }

    fn finish(&mut self, exit: Option<i32>, stderr_tail: &str) -> Outcome {
        let failed = exit != Some(0);
        let error = failed.then(|| {
            let last = tail(stderr_tail, 2048);
            match (exit, last.is_empty()) {
                (Some(code), true) => format!("exited with code {code}"),
                (Some(code), false) => format!("exited with code {code}: {last}"),
                (None, _) => "killed before it could exit".to_owned(),
            }
        });
        Outcome {
            failed,
            result: Some(clip(self.stdout.trim_end(), MAX_RESULT)),
            error,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_the_result_and_exit_codes_decide() {
        let mut p = ExecParser::default();
        assert_eq!(p.line("hello").len(), 1);
        p.line("world");
        let ok = p.finish(Some(0), "");
        assert!(!ok.failed);
        assert_eq!(ok.result.as_deref(), Some("hello\nworld"));
        let mut p = ExecParser::default();
        let bad = p.finish(Some(3), "warning\nboom\n");
        assert!(bad.failed);
        assert_eq!(
            bad.error.as_deref(),
            Some("exited with code 3: warning\nboom")
        );
    }
}
