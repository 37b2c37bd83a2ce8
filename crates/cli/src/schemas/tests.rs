//! The shipped docs/schemas/ match what this build generates.

use std::path::PathBuf;

use super::catalog;

fn shipped_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas")
}

#[test]
fn shipped_schemas_match_the_generated_ones() {
    let dir = shipped_dir();
    let regenerate = "regenerate with: cargo run -p flotilla-cli -- schemas --out docs/schemas";
    let mut expected = Vec::new();
    for shape in catalog() {
        let name = shape.file_name();
        expected.push(name.clone());
        let text = shape.text().expect("a schema renders");
        let shipped = std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
        assert!(
            shipped == text,
            "docs/schemas/{name} differs from the generated schema; {regenerate}"
        );
    }
    let mut extra = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("docs/schemas/ exists") {
        let name = entry
            .expect("a directory entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".json") && !expected.contains(&name) {
            extra.push(name);
        }
    }
    assert!(
        extra.is_empty(),
        "docs/schemas/ has files no shape generates: {extra:?}; {regenerate}"
    );
}

#[test]
fn every_schema_names_its_id_and_pins_the_schema_property() {
    for shape in catalog() {
        assert_eq!(shape.schema["$id"], shape.id);
        assert_eq!(shape.schema["title"], shape.id);
        if shape.id != super::handwritten::ERROR_ID {
            assert_eq!(
                shape.schema["properties"]["schema"]["const"], shape.id,
                "{}",
                shape.id
            );
        }
    }
}
