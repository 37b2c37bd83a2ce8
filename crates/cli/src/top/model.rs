//! The state of `flotilla top`, as plain data: the rows last read from the
//! daemon, the focused panel, the selection, the group filter, a pending
//! confirmation, the followed lane, and what each key does
//! ([`Model::on_key`]). No terminal, no daemon, no clock here: the loop
//! (`top/mod.rs`) feeds replies in and carries out the [`Action`]s.

/// A key, as the model sees it (the loop maps terminal events onto these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// A printable character.
    Char(char),
    Up,
    Down,
    Tab,
    BackTab,
    Enter,
    Esc,
    /// Ctrl-C (raw mode turns it into a key).
    CtrlC,
}

/// What the loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing beyond drawing again.
    None,
    /// Leave `top`.
    Quit,
    /// Read the daemon again now (a lane to follow was chosen).
    Refresh,
    /// Interrupt this lane (its name on this host); confirmed.
    Interrupt(String),
    /// Archive this lane; confirmed.
    Archive(String),
}

/// The panels, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Panel {
    Hosts,
    Peers,
    Lanes,
}

impl Panel {
    fn index(self) -> usize {
        match self {
            Self::Hosts => 0,
            Self::Peers => 1,
            Self::Lanes => 2,
        }
    }

    fn next(self) -> Self {
        match self {
            Self::Hosts => Self::Peers,
            Self::Peers => Self::Lanes,
            Self::Lanes => Self::Hosts,
        }
    }

    fn previous(self) -> Self {
        self.next().next()
    }
}

/// One host: this one, and with `--all` every host the roster names.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostRow {
    pub(crate) name: String,
    /// This host's hub link (`connected`, `no hub`...) or another host's
    /// state (`online`, `offline`).
    pub(crate) link: String,
    /// The link's round trip, when known.
    pub(crate) rtt_ms: Option<f64>,
    pub(crate) peers: usize,
}

/// One peer of the roster.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PeerRow {
    /// `HOST/NAME`.
    pub(crate) id: String,
    pub(crate) kind: String,
    /// Ordinary groups only (not the private `session:` one).
    pub(crate) groups: Vec<String>,
    pub(crate) state: String,
    /// Unread messages; `None` for a peer of another host.
    pub(crate) inbox: Option<u64>,
}

/// One lane of this host.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LaneRow {
    /// `HOST/NAME`.
    pub(crate) id: String,
    /// The name on this host (what lane ops take).
    pub(crate) name: String,
    pub(crate) cli: String,
    pub(crate) phase: String,
    pub(crate) turn: u32,
    /// Percent of the context window used, when a CLI reported it.
    pub(crate) context_pct: Option<f64>,
    /// The last event, on one line.
    pub(crate) last_event: String,
    /// Its groups (from the roster), for the filter.
    pub(crate) groups: Vec<String>,
}

/// Everything read from the daemon in one poll.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) hosts: Vec<HostRow>,
    pub(crate) peers: Vec<PeerRow>,
    pub(crate) lanes: Vec<LaneRow>,
}

/// A lane action waiting for `y`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pending {
    Interrupt(String),
    Archive(String),
}

/// The whole state of the screen.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) snapshot: Snapshot,
    /// Why the daemon could not be read (shown until a poll succeeds).
    pub(crate) unreachable: Option<String>,
    /// The outcome of the last action, for the status line.
    pub(crate) notice: Option<String>,
    pub(crate) panel: PanelState,
    /// Only rows in this group.
    pub(crate) group: Option<String>,
    pub(crate) pending: Option<Pending>,
    /// The lane whose events are shown, and its last event lines.
    pub(crate) follow: Option<String>,
    pub(crate) follow_lines: Vec<String>,
    pub(crate) help: bool,
}

/// The focused panel and the selected row of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PanelState {
    pub(crate) focus: Panel,
    pub(crate) selected: [usize; 3],
}

impl Default for PanelState {
    fn default() -> Self {
        Self {
            focus: Panel::Hosts,
            selected: [0; 3],
        }
    }
}

impl Model {
    /// Takes a new snapshot, keeping selections in range.
    pub(crate) fn update(&mut self, snapshot: Snapshot) {
        self.snapshot = snapshot;
        self.unreachable = None;
        if let Some(g) = &self.group
            && !self.groups().contains(g)
        {
            self.group = None;
        }
        self.clamp();
    }

    /// Every ordinary group of the roster's peers, sorted, once each.
    pub(crate) fn groups(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .snapshot
            .peers
            .iter()
            .flat_map(|p| p.groups.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    fn in_group(&self, groups: &[String]) -> bool {
        self.group
            .as_ref()
            .is_none_or(|g| groups.iter().any(|x| x == g))
    }

    /// The peers the filter lets through.
    pub(crate) fn visible_peers(&self) -> Vec<&PeerRow> {
        let peers = self.snapshot.peers.iter();
        peers.filter(|p| self.in_group(&p.groups)).collect()
    }

    /// The lanes the filter lets through.
    pub(crate) fn visible_lanes(&self) -> Vec<&LaneRow> {
        let lanes = self.snapshot.lanes.iter();
        lanes.filter(|l| self.in_group(&l.groups)).collect()
    }

    fn len(&self, panel: Panel) -> usize {
        match panel {
            Panel::Hosts => self.snapshot.hosts.len(),
            Panel::Peers => self.visible_peers().len(),
            Panel::Lanes => self.visible_lanes().len(),
        }
    }

    /// The selected row of a panel.
    pub(crate) fn selected(&self, panel: Panel) -> usize {
        self.panel.selected[panel.index()]
    }

    fn clamp(&mut self) {
        for panel in [Panel::Hosts, Panel::Peers, Panel::Lanes] {
            let last = self.len(panel).saturating_sub(1);
            let at = &mut self.panel.selected[panel.index()];
            *at = (*at).min(last);
        }
    }

    fn step(&mut self, down: bool) {
        let panel = self.panel.focus;
        let len = self.len(panel);
        let at = &mut self.panel.selected[panel.index()];
        *at = if down {
            (*at + 1).min(len.saturating_sub(1))
        } else {
            at.saturating_sub(1)
        };
    }

    /// The lane under the cursor, when the lanes panel has focus.
    pub(crate) fn selected_lane(&self) -> Option<&LaneRow> {
        if self.panel.focus != Panel::Lanes {
            return None;
        }
        self.visible_lanes()
            .get(self.selected(Panel::Lanes))
            .copied()
    }

    /// The next group filter: all, then each group in turn, then all.
    fn cycle_group(&mut self) {
        let groups = self.groups();
        let next = match &self.group {
            None => groups.first(),
            Some(g) => groups
                .iter()
                .position(|x| x == g)
                .and_then(|i| groups.get(i + 1)),
        };
        self.group = next.cloned();
        self.clamp();
    }

    /// What a key does.
    pub(crate) fn on_key(&mut self, key: Key) -> Action {
        if let Some(pending) = self.pending.take() {
            return match key {
                Key::Char('y' | 'Y') => match pending {
                    Pending::Interrupt(lane) => Action::Interrupt(lane),
                    Pending::Archive(lane) => Action::Archive(lane),
                },
                Key::CtrlC => Action::Quit,
                _ => {
                    self.notice = Some("cancelled".into());
                    Action::None
                }
            };
        }
        if self.help && !matches!(key, Key::CtrlC | Key::Char('q')) {
            self.help = false;
            return Action::None;
        }
        match key {
            Key::Char('q') | Key::CtrlC => Action::Quit,
            Key::Esc if self.follow.is_some() => {
                self.stop_following();
                Action::None
            }
            Key::Esc => Action::Quit,
            Key::Tab => {
                self.panel.focus = self.panel.focus.next();
                Action::None
            }
            Key::BackTab => {
                self.panel.focus = self.panel.focus.previous();
                Action::None
            }
            Key::Up | Key::Char('k') => {
                self.step(false);
                Action::None
            }
            Key::Down | Key::Char('j') => {
                self.step(true);
                Action::None
            }
            Key::Char('g') => {
                self.cycle_group();
                Action::None
            }
            Key::Char('?') => {
                self.help = true;
                Action::None
            }
            Key::Char('f') | Key::Enter => self.follow_selected(),
            Key::Char('i') => self.ask(Pending::Interrupt),
            Key::Char('a') => self.ask(Pending::Archive),
            _ => Action::None,
        }
    }

    fn follow_selected(&mut self) -> Action {
        let Some(lane) = self.selected_lane().map(|l| l.name.clone()) else {
            self.notice = Some("select a lane first (Tab to the lanes panel)".into());
            return Action::None;
        };
        if self.follow.as_deref() == Some(lane.as_str()) {
            self.stop_following();
            return Action::None;
        }
        self.follow = Some(lane);
        self.follow_lines.clear();
        Action::Refresh
    }

    fn stop_following(&mut self) {
        self.follow = None;
        self.follow_lines.clear();
    }

    fn ask(&mut self, what: fn(String) -> Pending) -> Action {
        match self.selected_lane().map(|l| l.name.clone()) {
            Some(lane) => self.pending = Some(what(lane)),
            None => self.notice = Some("select a lane first (Tab to the lanes panel)".into()),
        }
        Action::None
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
