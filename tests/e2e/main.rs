//! End-to-end tests of the real `flotilla` binary: real daemons on throwaway
//! homes, talking over their real sockets. One binary (so it builds once);
//! nextest runs its tests in the `e2e` group, a few at a time.

mod agents;
mod bench_federation;
mod chaos;
mod command_line;
mod control_limits;
mod crash;
mod daemon;
mod discovery;
mod docs;
mod enroll;
mod federation;
mod federation_message_path;
mod federation_rules;
mod home_state;
mod hub;
mod hub_groups;
mod hub_limits;
mod hub_queue_time;
mod hub_receipts;
mod integrations;
mod lane_input;
mod lane_messages;
mod lane_reaping;
mod lane_recovery;
mod lanes;
mod logs;
mod messaging;
mod model_server;
mod netns_link;
mod protocol;
mod remote_lanes;
mod service;
mod sessions;
mod sessions_live;
mod vendor_lanes;
