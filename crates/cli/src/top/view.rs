//! Draws `flotilla top` from its [`Model`]: the hosts, peers and lanes
//! panels, the followed lane's events, the status line and the help.
//! Colours only when `styled` (a terminal without `NO_COLOR`); the
//! selection is marked with `>` either way. Reads the model, never
//! changes it, and knows nothing of the daemon.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};

use super::model::{Model, Panel, Pending};

/// The keys, as the status line lists them.
pub(crate) const KEYS: &str =
    "q quit  Tab panel  ↑↓/jk select  g group  f/Enter follow  i interrupt  a archive  ? help";

const HELP: &str = "flotilla top: this host's peers and lanes, live (every second)

  q, Esc      quit (Esc first stops following)
  Tab         next panel (Shift-Tab: previous)
  ↑ ↓, j k    select a row of the focused panel
  g           filter by group: all, then each group in turn
  f, Enter    follow the selected lane's events (again: stop)
  i           interrupt the selected lane's turn (asks y/n)
  a           archive the selected lane (asks y/n)
  ?           this help (any key closes it)

--all adds the other hosts of the federation. For scripts:
flotilla roster --json, flotilla lane list --json.";

/// Draws the whole screen.
pub(crate) fn draw(frame: &mut Frame<'_>, model: &Model, styled: bool) {
    let hosts = u16::try_from(model.snapshot.hosts.len()).unwrap_or(u16::MAX);
    let follow = if model.follow.is_some() {
        Constraint::Fill(1)
    } else {
        Constraint::Length(0)
    };
    let [hosts_area, peers_area, lanes_area, follow_area, status_area] = Layout::vertical([
        Constraint::Length(hosts.saturating_add(3).min(8)),
        Constraint::Fill(1),
        Constraint::Fill(1),
        follow,
        Constraint::Length(2),
    ])
    .areas(frame.area());
    draw_hosts(frame, model, hosts_area, styled);
    draw_peers(frame, model, peers_area, styled);
    draw_lanes(frame, model, lanes_area, styled);
    if model.follow.is_some() {
        draw_follow(frame, model, follow_area);
    }
    draw_status(frame, model, status_area, styled);
    if model.help {
        draw_help(frame, frame.area());
    }
}

fn block(model: &Model, panel: Panel, title: String, styled: bool) -> Block<'static> {
    let focused = model.panel.focus == panel;
    let title = if focused {
        format!("[{title}]")
    } else {
        format!(" {title} ")
    };
    let block = Block::bordered().title(title);
    if focused && styled {
        block.border_style(Style::new().fg(Color::Cyan))
    } else {
        block
    }
}

fn table<'a>(
    model: &Model,
    panel: Panel,
    header: &'a [&'a str],
    rows: Vec<Row<'a>>,
    widths: &'a [Constraint],
    styled: bool,
) -> Table<'a> {
    let mut table = Table::new(rows, widths.iter().copied())
        .header(Row::new(header.iter().copied()))
        .highlight_symbol("> ")
        .highlight_spacing(HighlightSpacing::Always);
    if styled {
        table = table.header(Row::new(header.iter().copied()).style(Style::new().bold()));
        if model.panel.focus == panel {
            table = table.row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
        }
    }
    table
}

fn state(model: &Model, panel: Panel, rows: usize) -> TableState {
    let selected = (model.panel.focus == panel && rows > 0).then(|| model.selected(panel));
    TableState::default().with_selected(selected)
}

fn draw_hosts(frame: &mut Frame<'_>, model: &Model, area: Rect, styled: bool) {
    let rows: Vec<Row<'_>> = model
        .snapshot
        .hosts
        .iter()
        .map(|h| {
            let rtt = h.rtt_ms.map_or("-".into(), |ms| format!("{ms:.1} ms"));
            Row::new([h.name.clone(), h.link.clone(), rtt, h.peers.to_string()])
        })
        .collect();
    let n = rows.len();
    let widths = [
        Constraint::Fill(2),
        Constraint::Fill(2),
        Constraint::Length(10),
        Constraint::Length(6),
    ];
    let header = ["HOST", "LINK", "RTT", "PEERS"];
    let t = table(model, Panel::Hosts, &header, rows, &widths, styled).block(block(
        model,
        Panel::Hosts,
        "hosts".into(),
        styled,
    ));
    frame.render_stateful_widget(t, area, &mut state(model, Panel::Hosts, n));
}

fn group_title(model: &Model, what: &str) -> String {
    match &model.group {
        Some(g) => format!("{what} in group {g}"),
        None => what.to_owned(),
    }
}

fn draw_peers(frame: &mut Frame<'_>, model: &Model, area: Rect, styled: bool) {
    let peers = model.visible_peers();
    let rows: Vec<Row<'_>> = peers
        .iter()
        .map(|p| {
            let inbox = p.inbox.map_or("-".into(), |n| n.to_string());
            let groups = p.groups.join(",");
            Row::new([p.id.clone(), p.kind.clone(), p.state.clone(), inbox, groups])
        })
        .collect();
    let n = rows.len();
    let widths = [
        Constraint::Fill(3),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Fill(2),
    ];
    let header = ["PEER", "KIND", "STATE", "INBOX", "GROUPS"];
    let title = group_title(model, "peers");
    let t = table(model, Panel::Peers, &header, rows, &widths, styled).block(block(
        model,
        Panel::Peers,
        title,
        styled,
    ));
    frame.render_stateful_widget(t, area, &mut state(model, Panel::Peers, n));
}

fn draw_lanes(frame: &mut Frame<'_>, model: &Model, area: Rect, styled: bool) {
    let lanes = model.visible_lanes();
    let rows: Vec<Row<'_>> = lanes
        .iter()
        .map(|l| {
            let ctx = l.context_pct.map_or("-".into(), |p| format!("{p:.0}%"));
            let phase = if styled {
                let colour = match l.phase.as_str() {
                    "running" => Color::Green,
                    "idle" => Color::Yellow,
                    _ => Color::Reset,
                };
                Line::styled(l.phase.clone(), Style::new().fg(colour))
            } else {
                Line::raw(l.phase.clone())
            };
            Row::new([
                Line::raw(l.id.clone()),
                Line::raw(l.cli.clone()),
                phase,
                Line::raw(l.turn.to_string()),
                Line::raw(ctx),
                Line::raw(l.last_event.clone()),
            ])
        })
        .collect();
    let n = rows.len();
    let widths = [
        Constraint::Fill(2),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Fill(3),
    ];
    let header = ["LANE", "CLI", "PHASE", "TURN", "CONTEXT", "LAST EVENT"];
    let title = group_title(model, "lanes");
    let t = table(model, Panel::Lanes, &header, rows, &widths, styled).block(block(
        model,
        Panel::Lanes,
        title,
        styled,
    ));
    frame.render_stateful_widget(t, area, &mut state(model, Panel::Lanes, n));
}

fn draw_follow(frame: &mut Frame<'_>, model: &Model, area: Rect) {
    let lane = model.follow.as_deref().unwrap_or_default();
    let inner = usize::from(area.height.saturating_sub(2));
    let lines = &model.follow_lines;
    let shown = &lines[lines.len().saturating_sub(inner)..];
    let text: Vec<Line<'_>> = shown.iter().map(|l| Line::raw(l.as_str())).collect();
    let title = format!(" events of {lane} (f or Esc: stop) ");
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().title(title)),
        area,
    );
}

fn draw_status(frame: &mut Frame<'_>, model: &Model, area: Rect, styled: bool) {
    let group = model.group.as_deref().unwrap_or("all");
    let (text, alert) = match (&model.pending, &model.unreachable, &model.notice) {
        (Some(Pending::Interrupt(l)), _, _) => (format!("interrupt lane {l}? y/n"), true),
        (Some(Pending::Archive(l)), _, _) => (format!("archive lane {l}? y/n"), true),
        (None, Some(why), _) => (why.clone(), true),
        (None, None, Some(notice)) => (format!("group: {group} | {notice}"), false),
        (None, None, None) => (format!("group: {group}"), false),
    };
    let style = if alert && styled {
        Style::new().fg(Color::Yellow).bold()
    } else {
        Style::new()
    };
    let lines = vec![Line::styled(text, style), Line::raw(KEYS)];
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_help(frame: &mut Frame<'_>, area: Rect) {
    let [_, middle, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(17),
        Constraint::Fill(1),
    ])
    .areas(area);
    let [_, popup, _] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(64),
        Constraint::Fill(1),
    ])
    .areas(middle);
    frame.render_widget(Clear, popup);
    let help = Paragraph::new(HELP)
        .wrap(Wrap { trim: false })
        .block(Block::bordered().title(" help "));
    frame.render_widget(help, popup);
}
