//! Every place a message sends the person to must exist: a hint that names a panel of Settings,
//! a field of a model's Budget, or a `pinloom` command and its options is read out of the sources
//! that print it (the application layer, the providers, the command line and the window), and
//! checked against the window's sections and fields and against the command line's own help.
//! A hint naming something renamed or never built fails here instead of misleading a person.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's top folder.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of every source file under `folders` with one of `extensions`, tests left out (a
/// test may quote a wrong hint on purpose), with its path.
fn sources(folders: &[&str], extensions: &[&str]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut pending: Vec<PathBuf> = folders.iter().map(|folder| repo().join(folder)).collect();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let wanted = extensions.iter().any(|extension| name.ends_with(extension));
        if wanted && !name.contains(".test.") && name != "bindings.ts" {
            let text = std::fs::read_to_string(&path).unwrap();
            // A Rust string continued on the next line (`\` at a line's end) reads as one line.
            let joined = text
                .split("\\\n")
                .enumerate()
                .map(|(k, piece)| if k == 0 { piece } else { piece.trim_start() })
                .collect();
            found.push((path.clone(), joined));
        }
    }
    found
}

/// Where hints are written: what the report, the inspector, errors and the command line print.
fn hint_sources() -> Vec<(PathBuf, String)> {
    sources(
        &[
            "crates/pinloom-app/src",
            "crates/pinloom-engine/src",
            "crates/pinloom-providers/src",
            "crates/pinloom-cli/src",
            "crates/pinloom-mcp/src",
            "ui/src/components",
            "ui/src/lib",
        ],
        &[".rs", ".ts", ".svelte"],
    )
}

/// Each text that follows `marker` in `text`, up to the end of its line.
fn after<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    text.match_indices(marker)
        .map(|(at, _)| text[at + marker.len()..].lines().next().unwrap_or_default())
        .collect()
}

#[test]
fn every_settings_section_a_hint_names_is_one_the_window_has() {
    // The sections of Settings are the headings of its parts.
    let headings: Vec<String> =
        sources(&["ui/src/components"], &["Settings.svelte", "SettingsSection.svelte"])
            .iter()
            .flat_map(|(_, text)| after(text, "<h3>"))
            .map(|rest| rest.split("</h3>").next().unwrap().to_owned())
            .collect();
    assert!(headings.iter().any(|heading| heading == "Provider keys"), "{headings:?}");
    let mut wrong = Vec::new();
    for (path, text) in hint_sources() {
        for named in after(&text, "Settings → ") {
            if !headings.iter().any(|heading| named.starts_with(heading.as_str())) {
                wrong.push(format!("{}: Settings → {named}", path.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "hints naming no section of Settings ({headings:?}):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_budget_field_a_hint_names_is_one_the_budget_panel_has() {
    let panel =
        std::fs::read_to_string(repo().join("ui/src/components/BudgetPanel.svelte")).unwrap();
    let labels: Vec<&str> = after(&panel, "<label")
        .into_iter()
        .filter_map(|rest| rest.split_once('>'))
        .map(|(_, label)| label)
        .collect();
    assert!(labels.iter().any(|label| label.starts_with("Cut in steps of")), "{labels:?}");
    let mut wrong = Vec::new();
    for (path, text) in hint_sources() {
        for named in after(&text, "Budget → ") {
            if !labels.iter().any(|label| {
                !label.is_empty() && named.starts_with(label.split(" (").next().unwrap())
            }) {
                wrong.push(format!("{}: Budget → {named}", path.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "hints naming no field of the Budget panel:\n{}", wrong.join("\n"));
}

#[test]
fn every_command_and_option_a_hint_names_is_one_the_command_line_has() {
    let help = |args: &[&str]| {
        let output =
            Command::new(env!("CARGO_BIN_EXE_pinloom")).args(args).arg("--help").output().unwrap();
        assert!(output.status.success(), "pinloom {args:?} --help failed");
        String::from_utf8(output.stdout).unwrap()
    };
    let commands = help(&[]);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, text) in hint_sources() {
        for named in after(&text, "`pinloom ") {
            let command = named.split('`').next().unwrap();
            let mut words = command.split_whitespace();
            let Some(sub) =
                words.next().filter(|sub| sub.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            else {
                continue; // `pinloom … | head`: no command named
            };
            checked += 1;
            if !commands.lines().any(|line| line.trim_start().starts_with(&format!("{sub} "))) {
                wrong.push(format!("{}: `pinloom {command}`: no command {sub}", path.display()));
                continue;
            }
            let mut options = help(&[sub]);
            let mut words = words.peekable();
            // `pinloom models add …`: the options are the subcommand's.
            if let Some(action) = words.next_if(|word| {
                word.chars().all(|c| c.is_ascii_lowercase())
                    && options.lines().any(|line| line.starts_with(&format!("  {word} ")))
            }) {
                options = help(&[sub, action]);
            }
            for option in words.filter(|word| word.starts_with("--")) {
                if !options.contains(&format!("{option} "))
                    && !options.contains(&format!("{option}\n"))
                {
                    wrong.push(format!(
                        "{}: `pinloom {command}`: {sub} has no {option}",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(checked >= 10, "the hints were found ({checked})");
    assert!(wrong.is_empty(), "hints naming what the command line lacks:\n{}", wrong.join("\n"));
}
