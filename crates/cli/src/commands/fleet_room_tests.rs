use super::*;

fn roles(workers: usize) -> Vec<String> {
    let mut r = vec!["supervisor".to_owned()];
    r.extend((1..=workers).map(|i| format!("worker-{i}")));
    r
}

/// The `tmux` commands of a plan, one per entry, split at `;`.
fn commands(plan: &RoomPlan) -> Vec<Vec<String>> {
    plan.tmux_args()
        .split(|w| w == ";")
        .map(<[String]>::to_vec)
        .collect()
}

#[test]
fn the_session_is_named_after_the_fleet_with_tmux_separators_replaced() {
    assert_eq!(session_name("rep"), "flotilla-fleet-rep");
    assert_eq!(session_name("a.b:c d"), "flotilla-fleet-a_b_c_d");
    assert_eq!(session_name("x_y-1"), "flotilla-fleet-x_y-1");
}

#[test]
fn supervisor_and_decisions_on_the_left_workers_on_the_right() {
    let plan = plan("rep", &roles(2), "/bin/flotilla --home /h");
    let got: Vec<(&str, &str)> = plan
        .panes
        .iter()
        .map(|p| (p.role.as_str(), p.window.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("supervisor", "control"),
            ("decisions", "control"),
            ("worker-1", "control"),
            ("worker-2", "control"),
        ]
    );
    assert_eq!(
        plan.panes[0].command,
        "/bin/flotilla --home /h fleet watch rep --only supervisor"
    );
    assert_eq!(
        plan.panes[1].command,
        "/bin/flotilla --home /h fleet watch rep --only decisions"
    );
    let c = commands(&plan);
    assert_eq!(c[0][..4], ["new-session", "-d", "-s", "flotilla-fleet-rep"]);
    assert_eq!(
        c[0].last().map(String::as_str),
        Some(plan.panes[0].command.as_str())
    );
    assert!(
        c.iter().any(|c| c[..2] == ["split-window", "-v"]
            && c.contains(&"=flotilla-fleet-rep:control.{top-left}".to_owned())
            && c.last() == Some(&plan.panes[1].command)),
        "the decisions go below the supervisor: {c:?}"
    );
    assert!(
        c.iter()
            .any(|c| c[..3] == ["split-window", "-f", "-h"]
                && c.last() == Some(&plan.panes[2].command)),
        "the first worker opens a full-height right column: {c:?}"
    );
    assert!(
        c.iter().any(
            |c| c.contains(&"=flotilla-fleet-rep:control.{bottom-right}".to_owned())
                && c.contains(&"50%".to_owned())
                && c.last() == Some(&plan.panes[3].command)
        ),
        "the second worker takes half of the first one's height: {c:?}"
    );
}

#[test]
fn every_pane_is_titled_with_its_role_and_stays_when_its_command_ends() {
    let plan = plan("rep", &roles(1), "flotilla");
    let c = commands(&plan);
    for pane in &plan.panes {
        assert!(
            c.iter()
                .any(|c| c[0] == "select-pane" && c.ends_with(&["-T".into(), pane.role.clone()])),
            "no title for {}: {c:?}",
            pane.role
        );
    }
    let remain = c
        .iter()
        .position(|c| c.ends_with(&["remain-on-exit".into(), "on".into()]))
        .expect("remain-on-exit is set");
    assert_eq!(remain, 1, "set right after the session is made: {c:?}");
}

#[test]
fn past_six_workers_the_rest_go_to_further_windows() {
    let plan = plan("big", &roles(14), "flotilla");
    let windows: Vec<&str> = plan.panes.iter().map(|p| p.window.as_str()).collect();
    assert_eq!(windows.iter().filter(|w| **w == "control").count(), 2 + 6);
    assert_eq!(windows.iter().filter(|w| **w == "workers-2").count(), 6);
    assert_eq!(windows.iter().filter(|w| **w == "workers-3").count(), 2);
    let c = commands(&plan);
    let new_windows: Vec<&Vec<String>> = c.iter().filter(|c| c[0] == "new-window").collect();
    assert_eq!(new_windows.len(), 2, "{c:?}");
    let remain = c
        .iter()
        .filter(|c| c.contains(&"remain-on-exit".to_owned()));
    assert_eq!(remain.count(), 3, "every window keeps its panes");
    // Equal heights: a column of n takes (n-1)/n, then (n-2)/(n-1), ...
    let shares: Vec<&str> = c
        .iter()
        .filter(|c| {
            c.iter()
                .any(|w| w == "=flotilla-fleet-big:workers-2.{bottom-right}")
        })
        .filter_map(|c| c.iter().find(|w| w.ends_with('%')).map(String::as_str))
        .collect();
    assert_eq!(shares, ["83%", "80%", "75%", "66%", "50%"]);
}

#[test]
fn fleet_names_and_roles_are_quoted_for_the_shell() {
    let plan = plan("it's", &roles(0), "'/my bin/flotilla'");
    assert_eq!(
        plan.panes[0].command,
        r"'/my bin/flotilla' fleet watch 'it'\''s' --only supervisor"
    );
    assert_eq!(plan.panes.len(), 2, "no worker, no right column");
}
