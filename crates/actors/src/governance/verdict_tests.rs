#![allow(clippy::unwrap_used)]

use super::*;

const PASS: &str = r#"{"verdict": "pass", "blocking": [], "notes": ["tidy"]}"#;
const FAIL: &str = r#"{"verdict": "fail", "blocking": [{"file": "src/x.rs", "line": 12, "finding": "panics on empty input"}]}"#;

fn fail_with(finding: &str) -> String {
    format!(r#"{{"verdict": "fail", "blocking": [{finding}]}}"#)
}

#[test]
fn plain_json_parses() {
    let v = parse_verdict(PASS).unwrap();
    assert_eq!(
        (v.verdict, v.notes.as_slice()),
        (Outcome::Pass, &["tidy".to_owned()][..])
    );
    let v = parse_verdict(&format!("\n  {FAIL}\n")).unwrap();
    assert_eq!(v.verdict, Outcome::Fail);
    assert_eq!(
        v.blocking,
        [Finding {
            file: "src/x.rs".into(),
            line: 12,
            finding: "panics on empty input".into(),
        }]
    );
    let v = parse_verdict(r#"{"verdict": "pass"}"#).unwrap();
    assert!(
        v.blocking.is_empty() && v.notes.is_empty(),
        "both default to empty"
    );
}

#[test]
fn a_fenced_block_after_prose_is_found() {
    let text = format!("I read the diff carefully.\n\n```json\n{FAIL}\n```\n");
    assert_eq!(parse_verdict(&text).unwrap().verdict, Outcome::Fail);
    let untagged = format!("Verdict:\n```\n{PASS}\n```");
    assert_eq!(parse_verdict(&untagged).unwrap().verdict, Outcome::Pass);
}

#[test]
fn the_last_of_two_fenced_blocks_wins() {
    let text = format!(
        "First draft:\n```json\n{FAIL}\n```\nOn reflection it is fine:\n```json\n{PASS}\n```\n"
    );
    assert_eq!(parse_verdict(&text).unwrap().verdict, Outcome::Pass);
    let with_code = format!("```json\n{PASS}\n```\nThe fix:\n```rust\nfn x() {{}}\n```\n");
    assert_eq!(
        parse_verdict(&with_code).unwrap().verdict,
        Outcome::Pass,
        "a rust block is not the verdict"
    );
}

#[test]
fn prose_after_the_object_is_ignored() {
    let text = format!("{FAIL}\n\nThat is all; see {{the notes}} above.");
    assert_eq!(parse_verdict(&text).unwrap().verdict, Outcome::Fail);
    let text = format!("Here is my verdict: {PASS} Thanks!");
    assert_eq!(parse_verdict(&text).unwrap().verdict, Outcome::Pass);
    let unclosed = format!("In fn main() {{ the loop is fine.\n{PASS}");
    assert_eq!(parse_verdict(&unclosed).unwrap().verdict, Outcome::Pass);
}

#[test]
fn braces_and_quotes_inside_strings_do_not_count() {
    let text = r#"Done. {"verdict": "fail", "blocking": [{"file": "a.rs", "line": 3, "finding": "the \"}\" in fmt!(\"{}\") closes early {"}], "notes": ["}{"]}"#;
    let v = parse_verdict(text).unwrap();
    assert_eq!(
        v.blocking[0].finding,
        r#"the "}" in fmt!("{}") closes early {"#
    );
    assert_eq!(v.notes, ["}{"]);
}

#[test]
fn an_unknown_field_is_refused() {
    let err = parse_verdict(r#"{"verdict": "pass", "score": 9}"#).unwrap_err();
    assert!(matches!(err, VerdictError::Shape { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("unknown field `score`"), "{text}");
    assert!(
        text.contains(r#"return one JSON object {"verdict": "pass" | "fail""#),
        "{text}"
    );
    let err = parse_verdict(&fail_with(
        r#"{"file": "a", "line": 1, "finding": "x", "sev": 1}"#,
    ));
    assert!(matches!(err, Err(VerdictError::Shape { .. })), "{err:?}");
    let err = parse_verdict(r#"{"verdict": "maybe"}"#);
    assert!(matches!(err, Err(VerdictError::Shape { .. })), "{err:?}");
}

#[test]
fn pass_with_blocking_and_fail_without_are_refused() {
    let pass = r#"{"verdict": "pass", "blocking": [{"file": "a.rs", "line": 1, "finding": "x"}]}"#;
    let err = parse_verdict(pass).unwrap_err();
    assert!(matches!(err, VerdictError::Inconsistent { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("put remarks that do not block in \"notes\"")
    );
    let err = parse_verdict(r#"{"verdict": "fail", "notes": ["bad"]}"#).unwrap_err();
    assert!(matches!(err, VerdictError::Inconsistent { .. }), "{err:?}");
}

#[test]
fn a_line_zero_is_refused() {
    let err = parse_verdict(&fail_with(r#"{"file": "a.rs", "line": 0, "finding": "x"}"#));
    assert_eq!(
        err.unwrap_err().to_string().split(';').next(),
        Some("blocking[0] has \"line\" 0 (lines count from 1)")
    );
}

#[test]
fn an_absolute_or_climbing_path_is_refused() {
    for file in ["/etc/passwd", "../x.rs", "src/../../x.rs", "", "\\\\srv\\x"] {
        let json = fail_with(&format!(
            r#"{{"file": {}, "line": 1, "finding": "x"}}"#,
            serde_json::to_string(file).unwrap()
        ));
        let err = parse_verdict(&json).unwrap_err();
        assert!(
            matches!(err, VerdictError::BadFinding { index: 0, .. }),
            "{file}: {err:?}"
        );
    }
    let err = parse_verdict(&fail_with(r#"{"file": "a.rs", "line": 2, "finding": " "}"#));
    assert!(
        matches!(err, Err(VerdictError::BadFinding { .. })),
        "{err:?}"
    );
}

#[test]
fn too_many_or_too_long_is_refused() {
    let notes = vec!["n"; MAX_ENTRIES + 1];
    let json = serde_json::json!({"verdict": "pass", "notes": notes}).to_string();
    let err = parse_verdict(&json).unwrap_err();
    assert!(
        matches!(err, VerdictError::TooMany { count: 201, .. }),
        "{err:?}"
    );
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let json = serde_json::json!({"verdict": "pass", "notes": ["ok", long]}).to_string();
    let err = parse_verdict(&json).unwrap_err().to_string();
    assert!(err.starts_with("notes[1] is 4001 characters long"), "{err}");
}

#[test]
fn text_without_json_is_refused() {
    let err = parse_verdict("Looks good to me!").unwrap_err();
    assert_eq!(err, VerdictError::NoJson);
    assert!(err.to_string().ends_with(r#""notes": ["..."]}"#));
    let err = parse_verdict("```json\n{verdict: pass}\n```").unwrap_err();
    assert!(matches!(err, VerdictError::NotJson { .. }), "{err:?}");
    let err = parse_verdict("The verdict is {pass}.").unwrap_err();
    assert!(matches!(err, VerdictError::NotJson { .. }), "{err:?}");
}

#[test]
fn the_shape_states_the_limits_it_is_held_to() {
    assert!(VERDICT_SHAPE.contains(&format!("At most {MAX_ENTRIES} blocking findings")));
    assert!(VERDICT_SHAPE.contains(&format!("at most {MAX_TEXT_CHARS} characters")));
    let example = VERDICT_SHAPE.lines().find(|l| l.starts_with('{')).unwrap();
    let example = example.replace(r#""pass" | "fail""#, r#""fail""#);
    parse_verdict(&example).unwrap();
}
