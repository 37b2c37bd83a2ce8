//! `flotilla integrations` (issue 8, point 4): it writes, for each CLI
//! installed here, the instructions that teach it Flotilla and nothing
//! else; shows first what it will write; and `uninstall` removes exactly
//! what it wrote, leaving the user's own files and a file the user changed.

use flotilla_tests::TestHome;
use flotilla_tests::model_server::{ModelServer, Script};
use flotilla_tests::vendor::{CliKind, VendorEnv};
use serde_json::Value;

fn files(v: &Value, cli: &str) -> Vec<Value> {
    v["clis"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["cli"] == cli)
        .and_then(|c| c["files"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn integrations_write_only_their_files_and_remove_exactly_those() {
    let server = ModelServer::start(Script::default());
    let env = VendorEnv::new(&server);
    if env.bin(CliKind::Claude).is_none() {
        return;
    }
    let mut home = TestHome::new();
    home.env.extend(env.env());
    let user = env.home();
    let own = user.join(".claude/skills/mine/SKILL.md");
    std::fs::create_dir_all(own.parent().expect("dir")).expect("mkdir");
    std::fs::write(&own, "the user's own skill").expect("write");

    let dry = home.json(&["integrations", "install", "--dry-run"]);
    assert_eq!(dry["schema"], "flotilla.integrations.v1");
    let skill = user.join(".claude/skills/flotilla/SKILL.md");
    assert_eq!(files(&dry, "claude")[0]["change"], "write", "{dry}");
    assert!(!skill.exists(), "a dry run writes nothing");

    let done = home.json(&["integrations", "install"]);
    let text = std::fs::read_to_string(&skill).expect("the claude skill");
    assert!(
        text.contains("name: flotilla") && text.contains("list_peers"),
        "{text}"
    );
    let gemini = user.join(".gemini/extensions/flotilla/gemini-extension.json");
    assert!(gemini.exists(), "{done}");
    let status = home.json(&["integrations", "status"]);
    assert_eq!(
        files(&status, "claude")[0]["written_by_flotilla"],
        true,
        "{status}"
    );

    // A file the user changed is kept; the rest goes, and so do the
    // directories made for it; the user's own skill stays.
    let qwen = user.join(".qwen/extensions/flotilla/QWEN.md");
    std::fs::write(&qwen, "edited by the user").expect("edit");
    let gone = home.json(&["integrations", "uninstall"]);
    assert!(
        !skill.exists() && !skill.parent().expect("dir").exists(),
        "{gone}"
    );
    assert!(!gemini.exists(), "{gone}");
    assert_eq!(
        std::fs::read_to_string(&qwen).expect("kept"),
        "edited by the user"
    );
    assert_eq!(
        std::fs::read_to_string(&own).expect("own"),
        "the user's own skill"
    );
    let unknown = home.fails(&["integrations", "install", "--cli", "vim"], 2);
    assert!(
        unknown.contains("'vim'") && unknown.contains("claude, codex, gemini, qwen"),
        "{unknown}"
    );
}
