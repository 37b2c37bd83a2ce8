//! The message path across hosts, against what a line-by-line review found
//! (issue 13, point 7): real daemons and a real hub. Ids are chosen by
//! clients, so the same id from two senders is two messages, at the hub and
//! at the receiving host.

use flotilla_tests::federation::{host_home, hub_home, run_hub};
use flotilla_tests::stop_child;

use crate::federation::{bodies, collect, start, wait_visible};

#[test]
fn issue_13_the_same_id_from_senders_on_two_hosts_and_a_local_one_is_three_messages() {
    let (hub, addr) = hub_home();
    let mut server = run_hub(&hub);
    let mut laptop = host_home(&hub, "laptop", &addr);
    let mut mac = host_home(&hub, "mac", &addr);
    let mut work = host_home(&hub, "work", &addr);
    start(&mut laptop, "laptop");
    start(&mut mac, "mac");
    start(&mut work, "work");
    laptop.ok(&["peer", "join", "lead", "-g", "proj"]);
    mac.ok(&["peer", "join", "tester", "-g", "proj"]);
    work.ok(&["peer", "join", "builder", "-g", "proj"]);
    work.ok(&["peer", "join", "local", "-g", "proj"]);
    wait_visible(&laptop, "lead", "work/builder");
    wait_visible(&mac, "tester", "work/builder");

    work.ok(&[
        "send", "--as", "local", "--to", "builder", "--id", "42", "local 42",
    ]);
    laptop.ok(&[
        "send",
        "--as",
        "lead",
        "--to",
        "work/builder",
        "--id",
        "42",
        "laptop 42",
    ]);
    mac.ok(&[
        "send",
        "--as",
        "tester",
        "--to",
        "work/builder",
        "--id",
        "42",
        "mac 42",
    ]);
    let mut got = bodies(&collect(&work, "builder", 3));
    got.sort();
    assert_eq!(got, ["laptop 42", "local 42", "mac 42"]);
    stop_child(&mut server);
}
