//! Progress for long waits (indicatif): a spinner on stderr saying what is
//! awaited and for how long, shown only when stderr is a terminal and
//! `--quiet` was not given; it clears itself when the wait ends. It never
//! writes to stdout, so it cannot mix with a command's output or JSON.
//!
//! [`Phases`] is the same for a run of long steps (the benches): on a
//! terminal each step spins while it runs and leaves its line, with how
//! long it took, when the next begins; elsewhere each step prints its line
//! as a note when it begins, exactly as before spinners existed (so what
//! reads a bench's stderr sees the same lines).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A wait in progress; dropping it clears the spinner.
pub(crate) struct Waiting(Option<ProgressBar>);

/// Whether spinners may be drawn: stderr is a terminal and no `-q`.
fn spinners() -> bool {
    !crate::verbosity::quiet() && std::io::stderr().is_terminal()
}

impl Waiting {
    /// Shows `what` with a spinner, if stderr is a terminal.
    pub(crate) fn start(what: impl Into<String>) -> Self {
        if !spinners() {
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

    /// Says what is awaited now.
    pub(crate) fn set_message(&self, what: impl Into<String>) {
        if let Some(bar) = &self.0 {
            bar.set_message(what.into());
        }
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

/// The steps of a long run, one at a time; dropping it ends the last.
#[derive(Default)]
pub(crate) struct Phases {
    /// The step under way and its line.
    current: Option<(Waiting, String)>,
}

impl Phases {
    /// Ends the step under way (if any) and begins `what`.
    pub(crate) fn next(&mut self, what: impl Into<String>) {
        self.end();
        let what = what.into();
        if spinners() {
            self.current = Some((Waiting::start(what.clone()), what));
        } else {
            crate::verbosity::note!("{what}");
        }
    }

    /// Ends the step under way: on a terminal, its spinner becomes its line.
    pub(crate) fn end(&mut self) {
        if let Some((waiting, what)) = self.current.take() {
            let took = waiting.0.as_ref().map(ProgressBar::elapsed);
            drop(waiting);
            match took {
                Some(took) => eprintln!("{what} {:.1}s", took.as_secs_f64()),
                None => eprintln!("{what}"),
            }
        }
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        self.end();
    }
}
