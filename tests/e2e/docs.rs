//! The documentation as shipped: no merge left half done (a conflict's
//! markers were once committed in docs/security.md's table of attacks).

#[test]
fn no_document_holds_merge_conflict_markers() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/");
    files.extend(
        docs.flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    assert!(files.len() > 5, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let marker =
                line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") || line == "=======";
            assert!(
                !marker,
                "{}:{}: a merge conflict marker",
                file.display(),
                n + 1
            );
        }
    }
}
