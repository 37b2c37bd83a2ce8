//! `config.toml` as a user writes it: an accepted config serializes and
//! reads back equal, and every accessor the daemon calls answers.
#![no_main]

use flotilla_host::config::HostConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(config) = HostConfig::parse(&text) else {
        return;
    };
    let _ = config.watchdog_interval();
    let _ = config.outbox_room();
    let _ = config.hub_target();
    if let Ok(saved) = toml::to_string(&config) {
        assert_eq!(HostConfig::parse(&saved).ok(), Some(config));
    }
});
