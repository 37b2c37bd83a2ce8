//! Unit tests of `top`'s model: filtering, selection and what each key
//! does, without a terminal or a daemon.

use super::*;

fn peer(id: &str, groups: &[&str]) -> PeerRow {
    PeerRow {
        id: id.into(),
        kind: "mailbox".into(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        state: "idle".into(),
        inbox: Some(0),
    }
}

fn lane(name: &str, groups: &[&str]) -> LaneRow {
    LaneRow {
        id: format!("h/{name}"),
        name: name.into(),
        cli: "exec".into(),
        phase: "running".into(),
        turn: 1,
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..LaneRow::default()
    }
}

fn model() -> Model {
    let mut m = Model::default();
    m.update(Snapshot {
        hosts: vec![HostRow {
            name: "h".into(),
            link: "no hub".into(),
            ..HostRow::default()
        }],
        peers: vec![
            peer("h/alpha", &["red"]),
            peer("h/beta", &["blue"]),
            peer("h/gamma", &["blue", "red"]),
        ],
        lanes: vec![lane("one", &["red"]), lane("two", &["blue"])],
    });
    m
}

fn ids(m: &Model) -> Vec<&str> {
    m.visible_peers().iter().map(|p| p.id.as_str()).collect()
}

fn to_lanes(m: &mut Model) {
    while m.panel.focus != Panel::Lanes {
        assert_eq!(m.on_key(Key::Tab), Action::None);
    }
}

#[test]
fn g_cycles_from_all_through_each_group_and_back() {
    let mut m = model();
    assert_eq!(ids(&m), ["h/alpha", "h/beta", "h/gamma"]);
    m.on_key(Key::Char('g'));
    assert_eq!(m.group.as_deref(), Some("blue"));
    assert_eq!(ids(&m), ["h/beta", "h/gamma"]);
    let lanes: Vec<_> = m.visible_lanes().iter().map(|l| l.name.clone()).collect();
    assert_eq!(lanes, ["two"], "lanes are filtered too");
    m.on_key(Key::Char('g'));
    assert_eq!(m.group.as_deref(), Some("red"));
    assert_eq!(ids(&m), ["h/alpha", "h/gamma"]);
    m.on_key(Key::Char('g'));
    assert_eq!(m.group, None);
    assert_eq!(ids(&m).len(), 3);
}

#[test]
fn a_filter_on_a_group_that_is_gone_is_dropped() {
    let mut m = model();
    m.on_key(Key::Char('g'));
    let mut snap = m.snapshot.clone();
    snap.peers
        .retain(|p| !p.groups.contains(&"blue".to_owned()));
    m.update(snap);
    assert_eq!(m.group, None);
}

#[test]
fn selection_moves_within_the_focused_panel_and_stays_in_range() {
    let mut m = model();
    m.on_key(Key::Tab);
    assert_eq!(m.panel.focus, Panel::Peers);
    m.on_key(Key::Down);
    m.on_key(Key::Char('j'));
    m.on_key(Key::Char('j'));
    assert_eq!(m.selected(Panel::Peers), 2, "stops at the last row");
    m.on_key(Key::Char('k'));
    assert_eq!(m.selected(Panel::Peers), 1);
    assert_eq!(m.selected(Panel::Lanes), 0, "other panels keep theirs");
    m.on_key(Key::Char('g'));
    m.on_key(Key::Char('g'));
    m.on_key(Key::Down);
    assert_eq!(m.selected(Panel::Peers), 1, "two rows under red");
    m.on_key(Key::BackTab);
    assert_eq!(m.panel.focus, Panel::Hosts);
    m.on_key(Key::Up);
    assert_eq!(m.selected(Panel::Hosts), 0);
}

#[test]
fn interrupt_and_archive_wait_for_y() {
    let mut m = model();
    to_lanes(&mut m);
    m.on_key(Key::Down);
    assert_eq!(m.on_key(Key::Char('i')), Action::None);
    assert_eq!(m.pending, Some(Pending::Interrupt("two".into())));
    assert_eq!(m.on_key(Key::Char('y')), Action::Interrupt("two".into()));
    assert_eq!(m.pending, None);

    assert_eq!(m.on_key(Key::Char('a')), Action::None);
    assert_eq!(
        m.on_key(Key::Char('n')),
        Action::None,
        "anything else cancels"
    );
    assert_eq!(m.pending, None);
    assert_eq!(m.notice.as_deref(), Some("cancelled"));
    m.on_key(Key::Char('a'));
    assert_eq!(m.on_key(Key::Char('y')), Action::Archive("two".into()));
}

#[test]
fn lane_keys_need_the_lanes_panel() {
    let mut m = model();
    assert_eq!(m.on_key(Key::Char('i')), Action::None);
    assert_eq!(m.pending, None);
    assert_eq!(
        m.on_key(Key::Char('y')),
        Action::None,
        "no confirmation asked"
    );
    assert_eq!(m.on_key(Key::Enter), Action::None);
    assert_eq!(m.follow, None);
}

#[test]
fn enter_follows_a_lane_and_esc_stops_following_before_quitting() {
    let mut m = model();
    to_lanes(&mut m);
    assert_eq!(m.on_key(Key::Enter), Action::Refresh);
    assert_eq!(m.follow.as_deref(), Some("one"));
    assert_eq!(m.on_key(Key::Esc), Action::None);
    assert_eq!(m.follow, None);
    assert_eq!(m.on_key(Key::Char('f')), Action::Refresh);
    assert_eq!(m.on_key(Key::Char('f')), Action::None, "f again stops");
    assert_eq!(m.follow, None);
    assert_eq!(m.on_key(Key::Esc), Action::Quit);
}

#[test]
fn q_and_ctrl_c_quit_and_help_closes_on_any_other_key() {
    let mut m = model();
    assert_eq!(m.on_key(Key::Char('?')), Action::None);
    assert!(m.help);
    assert_eq!(m.on_key(Key::Tab), Action::None);
    assert!(!m.help);
    assert_eq!(
        m.panel.focus,
        Panel::Hosts,
        "the closing key does nothing else"
    );
    assert_eq!(m.on_key(Key::Char('q')), Action::Quit);
    assert_eq!(m.on_key(Key::CtrlC), Action::Quit);
    m.on_key(Key::Char('?'));
    assert_eq!(m.on_key(Key::Char('q')), Action::Quit);
}

#[test]
fn a_shrinking_snapshot_pulls_the_selection_back() {
    let mut m = model();
    to_lanes(&mut m);
    m.on_key(Key::Down);
    assert_eq!(m.selected(Panel::Lanes), 1);
    let mut snap = m.snapshot.clone();
    snap.lanes.truncate(1);
    m.update(snap);
    assert_eq!(m.selected(Panel::Lanes), 0);
    assert_eq!(m.selected_lane().map(|l| l.name.as_str()), Some("one"));
}
