//! Progress for long waits (indicatif): a spinner on stderr saying what is
//! awaited and for how long, shown only when stderr is a terminal and
//! `--quiet` was not given; it clears itself when the wait ends. It never
//! writes to stdout, so it cannot mix with a command's output or JSON.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A wait in progress; dropping it clears the spinner.
pub(crate) struct Waiting(Option<ProgressBar>);

impl Waiting {
    /// Shows `what` with a spinner, if stderr is a terminal.
    pub(crate) fn start(what: impl Into<String>) -> Self {
        if crate::verbosity::quiet() || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(what.into());
        bar.enable_steady_tick(Duration::from_millis(120));
        Self(Some(bar))
    }

    /// Prints a line on stderr above the spinner.
    pub(crate) fn println(&self, line: &str) {
        match &self.0 {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
