use std::collections::BTreeSet;

use crate::repo_root;

fn granted_permissions() -> BTreeSet<String> {
    let config = std::fs::read_to_string(repo_root().join("tauri.conf.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    let capabilities = config["app"]["security"]["capabilities"].as_array().unwrap();
    capabilities
        .iter()
        .flat_map(|capability| capability["permissions"].as_array().unwrap())
        .map(|permission| permission.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_command_is_granted_and_nothing_more() {
    let expected: BTreeSet<String> = pinloom_desktop::command_names::ALL
        .iter()
        .map(|name| format!("allow-{}", name.replace('_', "-")))
        .collect();
    let granted: BTreeSet<String> = granted_permissions()
        .into_iter()
        .filter(|permission| permission.starts_with("allow-"))
        .collect();
    assert_eq!(granted, expected, "tauri.conf.json must grant exactly the app's commands");
}

#[test]
fn only_event_listening_is_granted_beyond_the_apps_commands() {
    let others: BTreeSet<String> = granted_permissions()
        .into_iter()
        .filter(|permission| !permission.starts_with("allow-"))
        .collect();
    // Not even the dialog plugin's open and save: the dialogs run in the shell, which remembers
    // what the person chose, so the window cannot present a path of its own as chosen.
    let expected: BTreeSet<String> =
        ["core:event:allow-listen", "core:event:allow-unlisten"].map(String::from).into();
    assert_eq!(others, expected, "the window needs no other core or plugin permission");
}

#[test]
fn the_bindings_call_exactly_the_listed_commands() {
    let bindings =
        std::fs::read_to_string(repo_root().join(pinloom_desktop::BINDINGS_PATH)).unwrap();
    let invoked: BTreeSet<&str> = bindings
        .split("TAURI_INVOKE(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    let listed: BTreeSet<&str> = pinloom_desktop::command_names::ALL.iter().copied().collect();
    assert_eq!(invoked, listed, "command_names.rs must list every registered command");
}

#[test]
fn csp_allows_no_remote_content() {
    let config = std::fs::read_to_string(repo_root().join("tauri.conf.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    let csp = config["app"]["security"]["csp"].as_object().unwrap();
    for (directive, sources) in csp {
        let sources = sources.as_str().unwrap();
        assert!(
            !sources.contains("http:") || sources == "ipc: http://ipc.localhost",
            "{directive} may reach only Tauri IPC, found {sources}"
        );
        assert!(!sources.contains("https:") && !sources.contains('*'), "{directive}: {sources}");
        assert!(!sources.contains("unsafe-eval"), "{directive} must not allow eval");
    }
    assert_eq!(csp["script-src"], "'self'");
    assert_eq!(csp["frame-src"], "'none'");
}

#[test]
fn the_command_line_finds_the_app_under_the_apps_own_identifier() {
    let config = std::fs::read_to_string(repo_root().join("tauri.conf.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["identifier"], pinloom_app::APP_IDENTIFIER);
}
