use crate::repo_root;

/// Set to rewrite the committed bindings instead of failing when they are stale.
const WRITE_ENV: &str = "PINLOOM_WRITE_BINDINGS";

#[test]
fn committed_bindings_match_the_commands() {
    let committed_path = repo_root().join(pinloom_desktop::BINDINGS_PATH);
    let scratch = tempfile::tempdir().unwrap();
    let fresh_path = scratch.path().join("bindings.ts");
    pinloom_desktop::export_bindings(&fresh_path).unwrap();
    let fresh = std::fs::read_to_string(&fresh_path).unwrap();

    if std::env::var_os(WRITE_ENV).is_some() {
        std::fs::write(&committed_path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    // Line endings may differ on a Windows checkout; the content may not.
    assert!(
        committed.replace("\r\n", "\n") == fresh,
        "{} is stale: run `{WRITE_ENV}=1 cargo test --test shell bindings` and commit the result",
        committed_path.display()
    );
}
