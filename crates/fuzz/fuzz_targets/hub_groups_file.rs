//! The hub's `hub-groups.toml`: an accepted list renders and reads back
//! equal.
#![no_main]

use flotilla_hub::groups_file::GroupsFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = GroupsFile::new("/nonexistent/hub-groups.toml");
    let text = String::from_utf8_lossy(data);
    let Ok(policy) = file.parse(&text) else {
        return;
    };
    let saved = file.render(&policy).expect("an accepted list renders");
    assert_eq!(file.parse(&saved).ok(), Some(policy));
});
