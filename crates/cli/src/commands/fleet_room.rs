//! The control room of `flotilla fleet watch`, as a plan: from a fleet's
//! members, the tmux session's name, its windows and panes, the command
//! each pane runs, and the one `tmux` command line that builds it all.
//! Plain data and functions: nothing here starts a process or reads the
//! environment (`fleet_watch` runs the plan).
//!
//! The layout: the window `control` holds the supervisor top-left, the
//! daemon's decisions bottom-left, and a right-hand column of up to
//! [`PANES_PER_WINDOW`] workers, stacked; further workers go, by
//! [`PANES_PER_WINDOW`], into windows `workers-2`, `workers-3`, ... (one
//! full-width stack each). Every pane keeps its last output when its
//! command ends (`remain-on-exit`), and shows its role in its border.

use serde::Serialize;

/// Workers in one window's column; the rest go to further windows.
pub(crate) const PANES_PER_WINDOW: usize = 6;

/// The name of the window with the supervisor and the decisions.
pub(crate) const CONTROL_WINDOW: &str = "control";

/// What the bottom-left pane follows (`fleet watch NAME --only decisions`).
pub(crate) const DECISIONS: &str = "decisions";

/// One pane of the control room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct RoomPane {
    /// `supervisor`, `decisions`, `worker-1`, ...
    pub(crate) role: String,
    /// The tmux window that holds it (`control`, `workers-2`, ...).
    pub(crate) window: String,
    /// The shell command it runs.
    pub(crate) command: String,
}

/// The whole control room of one fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RoomPlan {
    /// The tmux session's name.
    pub(crate) session: String,
    /// Every pane, in the order they are made.
    pub(crate) panes: Vec<RoomPane>,
}

/// The session of fleet `fleet`: `flotilla-fleet-NAME`, with every
/// character tmux treats specially (anything but letters, digits, `-` and
/// `_`; `.` and `:` are target separators) made `_`.
pub(crate) fn session_name(fleet: &str) -> String {
    let safe: String = fleet
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '_',
            },
        )
        .collect();
    format!("flotilla-fleet-{safe}")
}

/// The plan for fleet `fleet` whose members have `roles` (`supervisor` and
/// the workers, in the daemon's order). `flotilla` is the command line
/// that reaches the same daemon: the binary and its global options
/// (`--home DIR`), each a shell word already quoted.
pub(crate) fn plan(fleet: &str, roles: &[String], flotilla: &str) -> RoomPlan {
    let pane = |role: &str, window: String| RoomPane {
        role: role.to_owned(),
        window,
        command: format!(
            "{flotilla} fleet watch {} --only {}",
            crate::hint::quoted(fleet),
            crate::hint::quoted(role)
        ),
    };
    let mut panes = vec![
        pane("supervisor", CONTROL_WINDOW.to_owned()),
        pane(DECISIONS, CONTROL_WINDOW.to_owned()),
    ];
    let workers = roles.iter().filter(|r| r.as_str() != "supervisor");
    for (i, role) in workers.enumerate() {
        panes.push(pane(role, window_of(i)));
    }
    RoomPlan {
        session: session_name(fleet),
        panes,
    }
}

/// The window of the `i`-th worker (from 0).
fn window_of(i: usize) -> String {
    match i / PANES_PER_WINDOW {
        0 => CONTROL_WINDOW.to_owned(),
        n => format!("workers-{}", n + 1),
    }
}

impl RoomPlan {
    /// `-t` of a window: the session matched exactly, then the window.
    fn window(&self, window: &str) -> String {
        format!("={}:{window}", self.session)
    }

    /// The arguments of the one `tmux` command that builds the session,
    /// detached (its commands separated by `;`, run by the server in one
    /// go, so no pane can end before `remain-on-exit` is set).
    pub(crate) fn tmux_args(&self) -> Vec<String> {
        let mut commands: Vec<Vec<String>> = Vec::new();
        let mut windows: Vec<&str> = Vec::new();
        for (i, pane) in self.panes.iter().enumerate() {
            let w = self.window(&pane.window);
            let mut make = self.make_pane(i);
            make.push(pane.command.clone());
            commands.push(make);
            if !windows.contains(&pane.window.as_str()) {
                windows.push(&pane.window);
                commands.push(words(&[
                    "set-option",
                    "-w",
                    "-t",
                    &w,
                    "remain-on-exit",
                    "on",
                ]));
            }
            // The new pane is its window's active one.
            commands.push(words(&["select-pane", "-t", &w, "-T", &pane.role]));
        }
        for window in &windows {
            let w = self.window(window);
            let option =
                |name: &str, value: &str| words(&["set-option", "-w", "-t", &w, name, value]);
            commands.push(option("pane-border-status", "top"));
            commands.push(option("pane-border-format", " #{pane_title} "));
        }
        let control = self.window(CONTROL_WINDOW);
        commands.push(words(&["select-pane", "-t", &top_left(&control)]));
        commands.push(words(&["select-window", "-t", &control]));
        commands.join(&";".to_owned())
    }

    /// The tmux command (without the pane's own command) that makes the
    /// `i`-th pane.
    fn make_pane(&self, i: usize) -> Vec<String> {
        let pane = &self.panes[i];
        let w = self.window(&pane.window);
        let in_window = self.panes[..i]
            .iter()
            .filter(|p| p.window == pane.window)
            .count();
        match (i, in_window) {
            (0, _) => words(&[
                "new-session",
                "-d",
                "-s",
                &self.session,
                "-n",
                &pane.window,
                "-x",
                "200",
                "-y",
                "50",
            ]),
            (_, 0) => {
                let session = format!("={}:", self.session);
                words(&["new-window", "-d", "-t", &session, "-n", &pane.window])
            }
            // The decisions: below the supervisor.
            (1, _) => words(&["split-window", "-v", "-l", "40%", "-t", &top_left(&w)]),
            // The first worker: the right-hand column, full height.
            (2, _) => words(&["split-window", "-f", "-h", "-l", "50%", "-t", &top_left(&w)]),
            _ => {
                // The k-th of the column's n panes takes its share of the
                // one above it, so all end the same height.
                let k = match pane.window == CONTROL_WINDOW {
                    true => in_window - 1,
                    false => in_window + 1,
                };
                let n = self.column_size(&pane.window);
                let share = format!("{}%", 100 * (n - k + 1) / (n - k + 2));
                let below = format!("{w}.{{bottom-right}}");
                words(&["split-window", "-v", "-l", &share, "-t", &below])
            }
        }
    }

    /// How many panes the worker column of `window` holds.
    fn column_size(&self, window: &str) -> usize {
        let workers = self.panes.iter().skip(2).filter(|p| p.window == window);
        workers.count()
    }
}

fn top_left(window: &str) -> String {
    format!("{window}.{{top-left}}")
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|w| (*w).to_owned()).collect()
}

#[cfg(test)]
#[path = "fleet_room_tests.rs"]
mod tests;
