//! The house rules, checked on the source itself (as rust-analyzer's tidy test checks its own):
//! what ARCHITECTURE.md promises about the code's shape, made a test so that it stays true.
//!
//! - only the store knows SQL, only the providers speak HTTP;
//! - the engine is pure: no files, clock, threads, processes, environment or network;
//! - only the sync room runs `git`, and only the desktop shell knows Tauri;
//! - the application layer's areas are rooms: none imports a sibling (grouped `use crate::{…}`
//!   imports included), the boundary types import no area, and everything an area shares with
//!   another lives in the layer below them (`base`);
//! - no function in the product's Rust runs over 100 lines (two older ones are held to their
//!   length until they are split: `LONG_FUNCTIONS_TO_SPLIT`);
//! - the window never swallows an error with a `.catch` or `catch` that drops it.
//!
//! Every check proves itself: a test plants a break of it in a tree made for the purpose and sees
//! it caught, and a check that read no file fails rather than passing on nothing.
//!
//! Test code may use SQL (to damage a database on purpose) and HTTP (the scripted provider
//! server); the rules are about the product's own source.

// A panic carrying the path is the failure report.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The application layer's areas: folders under `crates/pinloom-app/src` that must not reach
/// into each other. `base` is below them all and is the one folder every area may use.
const SHARED_LAYER: &str = "base";

/// The longest function the application layer allows, in lines from its signature to its
/// closing brace.
const LONGEST_FUNCTION: usize = 100;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Every file under `dir` whose name ends with one of `extensions`, skipping build output and
/// installed packages.
fn files_under(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | "dist" | "gen" | ".git") {
                    pending.push(path);
                }
            } else if extensions.iter().any(|extension| name.ends_with(extension)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The product's Rust source: every crate's `src` and the desktop shell's, without the test
/// server (a test double by nature) and without test folders.
fn product_rust_files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut sources = vec![("pinloom-desktop".to_owned(), root.join("src-tauri/src"))];
    for entry in fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != "pinloom-test-server" {
            sources.push((name, entry.path().join("src")));
        }
    }
    let mut files = Vec::new();
    for (krate, dir) in sources {
        for file in files_under(&dir, &[".rs"]) {
            files.push((krate.clone(), file));
        }
    }
    files
}

/// The lines of a Rust file that are code rather than comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(index, line)| (index + 1, line)).filter(|(_, line)| {
        let trimmed = line.trim_start();
        !trimmed.starts_with("//")
    })
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// Reports what broke a rule, or nothing.
fn report(rule: &str, broken: &[String]) -> String {
    let mut text = String::new();
    if !broken.is_empty() {
        let _ = writeln!(text, "{rule}:");
        for line in broken {
            let _ = writeln!(text, "  {line}");
        }
    }
    text
}

/// What a check found: what breaks its rule, and how many files it read to say so.
struct Found {
    broken: Vec<String>,
    read: usize,
}

impl Found {
    /// The check's report, or nothing; a check that read no file is a broken check.
    fn report(&self, rule: &str) -> String {
        if self.read == 0 {
            return format!("{rule}: the check read no file, so it proves nothing\n");
        }
        report(rule, &self.broken)
    }
}

/// Lines of the product's Rust files outside `allowed` crates that contain one of `words`.
fn words_outside(root: &Path, words: &[&str], allowed: impl Fn(&str, &Path) -> bool) -> Found {
    let mut found = Found { broken: Vec::new(), read: 0 };
    for (krate, path) in product_rust_files(root) {
        if allowed(&krate, &path) {
            continue;
        }
        found.read += 1;
        let text = fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            if let Some(word) = words.iter().find(|word| line.contains(*word)) {
                let place = shown(root, &path);
                found.broken.push(format!("{place}:{number}: `{}` ({word})", line.trim()));
            }
        }
    }
    found
}

/// The engine's inputs come in as arguments: it reads no file, clock, thread, process,
/// environment or socket, so that it can be tested exhaustively.
fn impure_engine(root: &Path) -> Found {
    const IMPURE: [&str; 9] = [
        "std::fs",
        "std::net",
        "std::thread",
        "std::process",
        "std::env",
        "SystemTime",
        "Instant::now",
        "tokio",
        "rand::",
    ];
    words_outside(root, &IMPURE, |krate, _| krate != "pinloom-engine")
}

/// `git` runs in the sync room alone.
fn git_outside_sync(root: &Path) -> Found {
    let sync = root.join("crates/pinloom-app/src/sync");
    words_outside(root, &["Command::new(\"git\")"], |_, path| path.starts_with(&sync))
}

/// Tauri is the desktop shell's alone.
fn tauri_outside_the_shell(root: &Path) -> Found {
    words_outside(root, &["tauri::", "use tauri", "tauri_plugin"], |krate, _| {
        krate == "pinloom-desktop"
    })
}

fn sql_outside_the_store(root: &Path) -> Found {
    // What only SQL says: a statement's opening words, or the SQLite driver itself.
    const SQL: [&str; 8] = [
        "rusqlite",
        "SELECT ",
        "INSERT INTO",
        "UPDATE ",
        "DELETE FROM",
        "CREATE TABLE",
        "CREATE INDEX",
        "PRAGMA ",
    ];
    words_outside(root, &SQL, |krate, _| krate == "pinloom-store")
}

fn http_outside_the_providers(root: &Path) -> Found {
    const HTTP: [&str; 5] = ["reqwest", "hyper::", "ureq", "TcpStream", "http::"];
    let mut found = words_outside(root, &HTTP, |krate, _| krate == "pinloom-providers");
    // A crate that cannot name an HTTP client cannot speak HTTP: only the providers (and the
    // tests' scripted server) depend on one.
    for manifest in files_under(&root.join("crates"), &["Cargo.toml"]) {
        if manifest.starts_with(root.join("crates/pinloom-providers"))
            || manifest.starts_with(root.join("crates/pinloom-test-server"))
        {
            continue;
        }
        found.read += 1;
        let text = fs::read_to_string(&manifest).unwrap();
        for (number, line) in code_lines(&text) {
            if ["reqwest", "hyper", "ureq"].iter().any(|client| line.starts_with(client)) {
                found.broken.push(format!(
                    "{}:{number}: `{}`",
                    shown(root, &manifest),
                    line.trim()
                ));
            }
        }
    }
    found
}

/// The application layer's areas: its folders, the shared layer aside.
fn app_areas(app_src: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(app_src) else { return Vec::new() };
    let mut areas: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != SHARED_LAYER)
        .collect();
    areas.sort();
    areas
}

/// The `use crate::{…};` statements of a file, each as one line however rustfmt broke it, with
/// the line it starts on.
fn grouped_imports(text: &str) -> Vec<(usize, String)> {
    let mut statements = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (number, line) in code_lines(text) {
        let trimmed = line.trim();
        if open.is_none()
            && (trimmed.starts_with("use crate::{")
                || trimmed.starts_with("pub use crate::{")
                || trimmed.starts_with("pub(crate) use crate::{"))
        {
            open = Some((number, String::new()));
        }
        if let Some((_, statement)) = open.as_mut() {
            statement.push_str(trimmed);
            statement.push(' ');
            if trimmed.ends_with(';') {
                statements.extend(open.take());
            }
        }
    }
    statements
}

/// Whether `statement` (a `use crate::{…}` import) names `area` at its top level.
fn names_area(statement: &str, area: &str) -> bool {
    let compact: String = statement.split_whitespace().collect();
    [
        format!("{{{area}::"),
        format!(",{area}::"),
        format!("{{{area},"),
        format!(",{area},"),
        format!(",{area}}}"),
        format!("{{{area}}}"),
    ]
    .iter()
    .any(|form| compact.contains(form.as_str()))
}

fn sibling_imports(root: &Path) -> Found {
    let app_src = root.join("crates/pinloom-app/src");
    let areas = app_areas(&app_src);
    let mut found = Found { broken: Vec::new(), read: 0 };
    // The boundary types (`json.rs`) and the shared layer are below every area: they name none.
    let below: Vec<(String, PathBuf)> =
        std::iter::once(("json".to_owned(), app_src.join("json.rs")))
            .chain(
                files_under(&app_src.join(SHARED_LAYER), &[".rs"])
                    .into_iter()
                    .map(|file| (SHARED_LAYER.to_owned(), file)),
            )
            .filter(|(_, path)| path.exists())
            .collect();
    let within: Vec<(String, PathBuf)> = areas
        .iter()
        .flat_map(|area| {
            files_under(&app_src.join(area), &[".rs"]).into_iter().map(|file| (area.clone(), file))
        })
        .chain(below)
        .collect();
    for (home, path) in within {
        found.read += 1;
        let text = fs::read_to_string(&path).unwrap();
        let mut reach = |number: usize, area: &str, what: &str| {
            found.broken.push(format!(
                "{}:{number}: {home} reaches into {area}: `{what}`",
                shown(root, &path)
            ));
        };
        for area in areas.iter().filter(|area| **area != home) {
            for (number, line) in code_lines(&text) {
                if line.contains(&format!("crate::{area}::"))
                    || line.contains(&format!("crate::{area}}}"))
                    || line.contains(&format!("crate::{area};"))
                {
                    reach(number, area, line.trim());
                }
            }
            for (number, statement) in grouped_imports(&text) {
                if names_area(&statement, area) {
                    reach(number, area, statement.trim());
                }
            }
        }
    }
    found
}

/// A function's opening line: its indentation, if the line opens one.
fn function_start(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let mut rest = trimmed;
    for qualifier in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    rest = rest.strip_prefix("async ").unwrap_or(rest);
    rest.starts_with("fn ").then(|| line.len() - trimmed.len())
}

/// Functions over [`LONGEST_FUNCTION`] lines in one formatted source text: `(line, name,
/// length)`. rustfmt puts a body's closing brace alone at its signature's indentation.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(indent) = function_start(line) else { continue };
        // A declaration without a body (in a trait) ends at its semicolon.
        let mut end = None;
        for (offset, later) in lines[start..].iter().enumerate() {
            let trimmed = later.trim_end();
            if offset > 0 && trimmed.len() == indent + 1 && trimmed.ends_with('}') {
                end = Some(start + offset);
                break;
            }
            if trimmed.ends_with(';')
                && !lines[start..=start + offset].iter().any(|l| l.contains('{'))
            {
                break;
            }
            if trimmed.ends_with('}') && trimmed.len() > indent && offset == 0 {
                // A one-line body.
                break;
            }
        }
        if let Some(end) = end {
            let length = end - start + 1;
            if length > LONGEST_FUNCTION {
                let name = line.trim_start().split("fn ").nth(1).unwrap_or("");
                let name = name.split(['(', '<']).next().unwrap_or("").to_owned();
                found.push((start + 1, name, length));
            }
        }
    }
    found
}

/// Functions over the limit when the rule went workspace-wide, each held to the length it had
/// then (it may shrink, never grow) until it is split: (file, function, lines).
const LONG_FUNCTIONS_TO_SPLIT: [(&str, &str, usize); 2] = [
    // The command line's one match over its commands, an arm each.
    ("crates/pinloom-cli/src/main.rs", "run", 193),
    // tauri-specta's list of every command, one entry a line.
    ("src-tauri/src/lib.rs", "specta_builder", 103),
];

fn functions_over_a_hundred_lines(root: &Path) -> Found {
    let mut found = Found { broken: Vec::new(), read: 0 };
    for (_, path) in product_rust_files(root) {
        found.read += 1;
        let text = fs::read_to_string(&path).unwrap();
        let place = shown(root, &path);
        for (line, name, length) in long_functions(&text) {
            let held = LONG_FUNCTIONS_TO_SPLIT.iter().any(|(file, function, most)| {
                place == *file && name == *function && length <= *most
            });
            if !held {
                found.broken.push(format!("{place}:{line}: `{name}` runs {length} lines"));
            }
        }
    }
    found
}

/// A `.catch(…)` handler or a `catch` block that does nothing with what was thrown: the person
/// would never learn that something failed.
fn swallowed_errors(root: &Path) -> Found {
    let mut broken = Vec::new();
    let mut read = 0;
    for path in files_under(&root.join("ui/src"), &[".ts", ".svelte"]) {
        if path.to_string_lossy().ends_with(".test.ts") {
            continue;
        }
        read += 1;
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let compact: String = line.split_whitespace().collect();
            let swallowing_handler = compact.contains(".catch(()=>")
                || compact.contains(".catch((_")
                || compact.contains(".catch(_")
                || compact.contains(".catch(noop")
                || compact.contains(".catch(()=>{})");
            // `catch {` binds nothing: what was thrown is dropped unless the block says why.
            let bare_catch = compact.contains("}catch{") || compact.starts_with("catch{");
            let explained = [index.wrapping_sub(1), index + 1]
                .iter()
                .filter_map(|near| lines.get(*near))
                .any(|near| near.trim_start().starts_with("//"));
            if swallowing_handler || (bare_catch && !explained) {
                broken.push(format!("{}:{}: `{}`", shown(root, &path), index + 1, line.trim()));
            }
        }
    }
    Found { broken, read }
}

/// A check: it reads a tree's files from its root.
type Check = fn(&Path) -> Found;

/// Every check, with the rule it keeps.
fn checks() -> Vec<(String, Check)> {
    vec![
        ("SQL outside pinloom-store".to_owned(), sql_outside_the_store),
        ("HTTP outside pinloom-providers".to_owned(), http_outside_the_providers),
        ("the engine reading the world".to_owned(), impure_engine),
        ("git run outside the sync room".to_owned(), git_outside_sync),
        ("Tauri outside the desktop shell".to_owned(), tauri_outside_the_shell),
        ("an area of pinloom-app reaching into a sibling".to_owned(), sibling_imports),
        (format!("functions over {LONGEST_FUNCTION} lines"), functions_over_a_hundred_lines),
        ("errors the window swallows".to_owned(), swallowed_errors),
    ]
}

#[test]
fn the_house_rules_hold() {
    let root = repo_root();
    let text: String = checks().iter().map(|(rule, check)| check(&root).report(rule)).collect();
    assert!(text.is_empty(), "the house rules are broken:\n{text}");
}

/// A tree of `files` (path, text) made to test the checks on.
fn planted(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let file = dir.path().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    dir
}

/// Each check catches the break planted for it, passes the same tree without it, and fails when
/// it reads nothing.
#[test]
fn every_check_catches_a_planted_break_and_reads_something() {
    let long = format!("fn long() {{\n{}}}\n", "    step();\n".repeat(LONGEST_FUNCTION));
    // A tree that keeps every rule, and one file to break each.
    let clean: Vec<(&str, &str)> = vec![
        ("crates/pinloom-store/src/lib.rs", "fn rows() { conn.execute(\"SELECT 1\"); }\n"),
        ("crates/pinloom-store/Cargo.toml", "[dependencies]\nrusqlite = \"1\"\n"),
        ("crates/pinloom-providers/src/lib.rs", "use reqwest::Client;\n"),
        ("crates/pinloom-engine/src/lib.rs", "pub fn plan() {}\n"),
        ("crates/pinloom-app/src/sync/git.rs", "fn run() { Command::new(\"git\"); }\n"),
        ("crates/pinloom-app/src/base/plan.rs", "use crate::json::PlanView;\n"),
        ("crates/pinloom-app/src/json.rs", "pub struct PlanView;\n"),
        ("crates/pinloom-app/src/conversation/send.rs", "use crate::{base::plan, json::X};\n"),
        ("crates/pinloom-app/src/window/compare.rs", "fn short() {\n    step();\n}\n"),
        ("src-tauri/src/lib.rs", "use tauri::State;\n"),
        ("ui/src/lib/a.ts", "try { go(); } catch (thrown) { show(thrown); }\n"),
    ];
    let breaks: Vec<(usize, &str, String)> = vec![
        (0, "crates/pinloom-app/src/window/rows.rs", "fn rows() { q(\"SELECT 1\"); }\n".into()),
        (1, "crates/pinloom-engine/Cargo.toml", "[dependencies]\nreqwest = \"1\"\n".into()),
        (
            2,
            "crates/pinloom-engine/src/clock.rs",
            "fn now() { std::time::SystemTime::now(); }\n".into(),
        ),
        (
            3,
            "crates/pinloom-app/src/window/pull.rs",
            "fn pull() { Command::new(\"git\"); }\n".into(),
        ),
        (4, "crates/pinloom-app/src/window/shell.rs", "use tauri::AppHandle;\n".into()),
        (
            5,
            "crates/pinloom-app/src/window/reach.rs",
            "use crate::{\n    base::plan,\n    sync::git::run,\n};\n".into(),
        ),
        (6, "crates/pinloom-app/src/window/long.rs", long),
        (7, "ui/src/lib/b.ts", "go().catch(() => {});\n".into()),
    ];
    let checks = checks();
    assert_eq!(breaks.len(), checks.len(), "a planted break for every check");
    let tree = planted(&clean);
    for (rule, check) in &checks {
        let found = check(tree.path());
        assert!(found.read > 0, "{rule}: read nothing of the planted tree");
        assert!(
            found.broken.is_empty(),
            "{rule}: found a break in a clean tree: {:?}",
            found.broken
        );
    }
    for (index, path, text) in &breaks {
        let mut files = clean.clone();
        files.push((path, text));
        let tree = planted(&files);
        let (rule, check) = &checks[*index];
        let found = check(tree.path());
        assert!(
            found.broken.iter().any(|line| line.contains(path)),
            "{rule}: missed the break planted in {path}: {:?}",
            found.broken
        );
        // Every other check still passes: each break is its own check's alone.
        for (_, (rule, check)) in checks.iter().enumerate().filter(|(other, _)| other != index) {
            let found = check(tree.path());
            assert!(
                found.broken.is_empty(),
                "{rule} blamed {path}, planted for another check: {:?}",
                found.broken
            );
        }
    }
    let empty = planted(&[("crates/.keep", "")]);
    for (rule, check) in &checks {
        assert!(check(empty.path()).report(rule).contains("proves nothing"), "{rule}");
    }
}

/// The long-function check's parts, on the forms rustfmt writes.
#[test]
fn the_checks_find_what_they_look_for() {
    let long_body =
        format!("    fn long() {{\n{}    }}\n", "        step();\n".repeat(LONGEST_FUNCTION));
    let found = long_functions(&long_body);
    assert_eq!(found, vec![(1, "long".to_owned(), LONGEST_FUNCTION + 2)]);
    let short_body = format!("pub async fn short() {{\n{}}}\n", "    step();\n".repeat(10));
    assert!(long_functions(&short_body).is_empty());
    assert_eq!(function_start("    pub(crate) async fn reply("), Some(4));
    assert_eq!(function_start("    let f = 1;"), None);
}
