//! The house rules, checked on the source itself (as rust-analyzer's tidy test checks its own):
//! what ARCHITECTURE.md promises about the code's shape, made a test so that it stays true.
//!
//! - only the store knows SQL, only the providers speak HTTP;
//! - the engine is pure: no files, clock, threads, processes, environment or network;
//! - only the sync room runs `git`, and only the desktop shell knows Tauri;
//! - the application layer stands on floors: the files on the ground (`json.rs`, `error.rs`,
//!   `runtime.rs`, `data_dir.rs`) name no folder, `base` names no folder above it, `models`
//!   stands on `base`, and the rooms above them (`conversation`, `sync`, …) never name each
//!   other (grouped `use crate::{…}` imports included): what rooms share lives below them;
//! - a room's methods on `Pinloom` stay in the room: none is `pub(crate)` (so the compiler
//!   refuses a call from elsewhere, `pub(in crate::room)` instead), and no public one is called
//!   from another room or from a floor below;
//! - no function in the product's Rust runs over 100 lines (the shell's list of its commands, one
//!   macro call, is held to its length: `LONG_FUNCTIONS_TO_SPLIT`);
//! - the window never swallows an error with a `.catch` or `catch` that drops it;
//! - the fuzz workspace locks the versions the main one does, so checking it reuses clippy's work;
//! - the crates stand on floors (`CRATE_FLOORS`): each depends only on crates below it, as
//!   `cargo metadata` reads the manifests, the root's (the desktop shell) included.
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

/// The application layer's floors below its rooms, lowest first: `base` names neither, `models`
/// stands on `base`, and every other folder under `crates/pinloom-app/src` is a room that may use
/// both and never another room.
const LOWER_FLOORS: [&str; 2] = ["base", "models"];

/// The files of `crates/pinloom-app/src` that stand above the rooms: the crate's face, and the
/// opening of the application (which asks rooms to recover and seed). Every other file there is on
/// the ground and names no folder.
const ABOVE_THE_ROOMS: [&str; 2] = ["lib.rs", "open.rs"];

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

/// The application layer's folders, lowest first: the lower floors, then the rooms by name.
fn app_folders(app_src: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(app_src) else { return Vec::new() };
    let mut rooms: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !LOWER_FLOORS.contains(&name.as_str()))
        .collect();
    rooms.sort();
    LOWER_FLOORS
        .iter()
        .map(|floor| (*floor).to_owned())
        .filter(|floor| app_src.join(floor).is_dir())
        .chain(rooms)
        .collect()
}

/// How high a folder of the application layer stands: 0 for `base`, 1 for `models`, 2 for
/// every room.
fn floor_of(folder: &str) -> usize {
    LOWER_FLOORS.iter().position(|floor| *floor == folder).unwrap_or(LOWER_FLOORS.len())
}

/// Whether a file of `home` (a folder, or `""` for a file on the ground) may name `folder`: a
/// lower floor, never a room beside it or anything above.
fn may_name(home: &str, folder: &str) -> bool {
    !home.is_empty() && floor_of(folder) < floor_of(home)
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

fn climbing_imports(root: &Path) -> Found {
    let app_src = root.join("crates/pinloom-app/src");
    let folders = app_folders(&app_src);
    let mut found = Found { broken: Vec::new(), read: 0 };
    let ground = fs::read_dir(&app_src)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .filter(|path| {
            !ABOVE_THE_ROOMS.iter().any(|name| path.file_name().is_some_and(|file| file == *name))
        })
        .map(|path| (String::new(), path));
    let within: Vec<(String, PathBuf)> = folders
        .iter()
        .flat_map(|home| {
            files_under(&app_src.join(home), &[".rs"]).into_iter().map(|file| (home.clone(), file))
        })
        .chain(ground)
        .collect();
    for (home, path) in within {
        found.read += 1;
        let text = fs::read_to_string(&path).unwrap();
        let mut reach = |number: usize, folder: &str, what: &str| {
            let home = if home.is_empty() { "a file on the ground" } else { home.as_str() };
            found.broken.push(format!(
                "{}:{number}: {home} reaches up or aside into {folder}: `{what}`",
                shown(root, &path)
            ));
        };
        for folder in folders.iter().filter(|folder| **folder != home && !may_name(&home, folder)) {
            for (number, line) in code_lines(&text) {
                if line.contains(&format!("crate::{folder}::"))
                    || line.contains(&format!("crate::{folder}}}"))
                    || line.contains(&format!("crate::{folder};"))
                {
                    reach(number, folder, line.trim());
                }
            }
            for (number, statement) in grouped_imports(&text) {
                if names_area(&statement, folder) {
                    reach(number, folder, statement.trim());
                }
            }
        }
    }
    found
}

/// The bodies of a source text's `impl Pinloom` blocks, each with the line it starts on:
/// rustfmt closes a top-level block with a `}` alone at the start of a line.
fn pinloom_impls(text: &str) -> Vec<(usize, Vec<&str>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        if line.starts_with("impl Pinloom {") {
            let end =
                lines[start..].iter().position(|l| *l == "}").map_or(lines.len(), |at| start + at);
            blocks.push((start + 1, lines[start..end].to_vec()));
        }
    }
    blocks
}

/// A method's name where `line` declares one on the handle.
fn declared_method(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    let (visibility, rest) = trimmed.split_once(' ')?;
    if !visibility.starts_with("pub") {
        return None;
    }
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let name = rest.strip_prefix("fn ")?.split(['(', '<']).next()?;
    Some((visibility, name))
}

fn methods_across_rooms(root: &Path) -> Found {
    let app_src = root.join("crates/pinloom-app/src");
    let folders = app_folders(&app_src);
    let mut found = Found { broken: Vec::new(), read: 0 };
    let files: Vec<(String, PathBuf, String)> = folders
        .iter()
        .flat_map(|folder| {
            files_under(&app_src.join(folder), &[".rs"])
                .into_iter()
                .map(|file| (folder.clone(), file.clone(), fs::read_to_string(file).unwrap()))
        })
        .collect();
    // Who declares each public method: a room's others are its own.
    let mut public: Vec<(String, String)> = Vec::new();
    for (folder, path, text) in &files {
        found.read += 1;
        for (start, block) in pinloom_impls(text) {
            for (offset, line) in block.iter().enumerate() {
                match declared_method(line) {
                    Some(("pub", name)) => public.push((name.to_owned(), folder.clone())),
                    Some(("pub(crate)", name)) if folder != LOWER_FLOORS[0] => {
                        found.broken.push(format!(
                            "{}:{}: `{name}` is pub(crate): make it pub(in crate::{folder}), or \
                             move what rooms share to base",
                            shown(root, path),
                            start + offset
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    for (folder, path, text) in &files {
        for (start, block) in pinloom_impls(text) {
            for (offset, line) in block.iter().enumerate() {
                for (name, owner) in &public {
                    if owner != folder
                        && !may_name(folder, owner)
                        && line.contains(&format!("self.{name}("))
                    {
                        found.broken.push(format!(
                            "{}:{}: {folder} calls {owner}'s `{name}`",
                            shown(root, path),
                            start + offset
                        ));
                    }
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
const LONG_FUNCTIONS_TO_SPLIT: [(&str, &str, usize); 1] = [
    // tauri-specta's list of every command, one entry a line: one macro call, which cannot be
    // cut in two.
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

/// The workspace's crates on their floors, as ARCHITECTURE.md draws them: a crate's normal and
/// build dependencies name only crates on lower floors (a test may use any lower one too).
const CRATE_FLOORS: [(&str, usize); 9] = [
    // The scripted provider server the tests of every floor above run against.
    ("pinloom-test-server", 0),
    ("pinloom-tokenizers", 1),
    ("pinloom-store", 1),
    ("pinloom-engine", 2),
    ("pinloom-providers", 3),
    ("pinloom-app", 4),
    ("pinloom-mcp", 5),
    ("pinloom-cli", 6),
    ("pinloom-desktop", 6),
];

/// A crate of the workspace depending on one on its own floor or above, read from `cargo
/// metadata` (the root manifest, the desktop shell's, included), or a crate no floor holds.
fn crates_depending_upward(root: &Path) -> Found {
    let mut found = Found { broken: Vec::new(), read: 0 };
    let Ok(output) = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root)
        .output()
    else {
        return found;
    };
    let Ok(metadata) = serde_json::from_slice::<serde_json::Value>(&output.stdout) else {
        return found;
    };
    let floor = |name: &str| CRATE_FLOORS.iter().find(|(known, _)| *known == name).map(|f| f.1);
    for package in metadata["packages"].as_array().into_iter().flatten() {
        found.read += 1;
        let name = package["name"].as_str().unwrap_or_default();
        let manifest = package["manifest_path"].as_str().map(Path::new).unwrap_or(root);
        let place = shown(root, manifest);
        let Some(own) = floor(name) else {
            found.broken.push(format!("{place}: {name}, a crate no floor holds (CRATE_FLOORS)"));
            continue;
        };
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let named = dependency["name"].as_str().unwrap_or_default();
            if let Some(theirs) = floor(named)
                && theirs >= own
            {
                found.broken.push(format!(
                    "{place}: {name} (floor {own}) depends on {named} (floor {theirs}): a crate \
                     uses only those below it"
                ));
            }
        }
    }
    found
}

/// The `(name, version)` of every package a `Cargo.lock` names.
fn locked_versions(text: &str) -> Vec<(String, String)> {
    let mut locked = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if let (Some(value), Some(named)) = (line.strip_prefix("version = "), name.take()) {
            locked.push((named, value.trim_matches('"').to_owned()));
        }
    }
    locked
}

/// A package the fuzz workspace locks at a version the main workspace does not: checking the
/// fuzz targets would check it anew instead of reusing what clippy checked.
fn fuzz_versions_apart(root: &Path) -> Found {
    let mut found = Found { broken: Vec::new(), read: 0 };
    let (Ok(main), Ok(fuzz)) = (
        fs::read_to_string(root.join("Cargo.lock")),
        fs::read_to_string(root.join("fuzz/Cargo.lock")),
    ) else {
        return found;
    };
    found.read = 2;
    let main = locked_versions(&main);
    for (name, version) in locked_versions(&fuzz) {
        let elsewhere: Vec<&str> = main
            .iter()
            .filter(|(known, _)| *known == name)
            .map(|(_, locked)| locked.as_str())
            .collect();
        if !elsewhere.is_empty() && !elsewhere.contains(&version.as_str()) {
            found.broken.push(format!(
                "fuzz/Cargo.lock: {name} {version}, where Cargo.lock has {}",
                elsewhere.join(", ")
            ));
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
        ("pinloom-app's imports climbing or reaching aside".to_owned(), climbing_imports),
        ("a room's methods used outside it".to_owned(), methods_across_rooms),
        (format!("functions over {LONGEST_FUNCTION} lines"), functions_over_a_hundred_lines),
        ("errors the window swallows".to_owned(), swallowed_errors),
        ("the fuzz workspace locking other versions".to_owned(), fuzz_versions_apart),
        ("a crate depending on one not below it".to_owned(), crates_depending_upward),
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
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/pinloom-store\"]\n\n[package]\nname = \"pinloom-desktop\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[lib]\npath = \"src-tauri/src/lib.rs\"\n\n[dependencies]\npinloom-store = { path = \"crates/pinloom-store\" }\n",
        ),
        (
            "crates/pinloom-store/Cargo.toml",
            "[package]\nname = \"pinloom-store\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\nrusqlite = \"1\"\n",
        ),
        ("crates/pinloom-providers/src/lib.rs", "use reqwest::Client;\n"),
        ("crates/pinloom-engine/src/lib.rs", "pub fn plan() {}\n"),
        ("crates/pinloom-app/src/sync/git.rs", "fn run() { Command::new(\"git\"); }\n"),
        ("crates/pinloom-app/src/base/plan.rs", "use crate::json::PlanView;\n"),
        ("crates/pinloom-app/src/json.rs", "pub struct PlanView;\n"),
        ("crates/pinloom-app/src/conversation/send.rs", "use crate::{base::plan, json::X};\n"),
        ("crates/pinloom-app/src/models/profiles.rs", "use crate::base::plan::Planned;\n"),
        (
            "crates/pinloom-app/src/window/map.rs",
            "impl Pinloom {\n    pub async fn map(&self) {}\n    pub(in crate::window) fn tiles(&self) {\n        self.map();\n    }\n}\n",
        ),
        ("crates/pinloom-app/src/window/compare.rs", "fn short() {\n    step();\n}\n"),
        ("src-tauri/src/lib.rs", "use tauri::State;\n"),
        ("ui/src/lib/a.ts", "try { go(); } catch (thrown) { show(thrown); }\n"),
        ("Cargo.lock", "[[package]]\nname = \"serde\"\nversion = \"1.0.2\"\n"),
        ("fuzz/Cargo.lock", "[[package]]\nname = \"serde\"\nversion = \"1.0.2\"\n"),
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
        (
            6,
            "crates/pinloom-app/src/conversation/marks.rs",
            "impl Pinloom {\n    fn mark(&self) {\n        self.map();\n    }\n}\n".into(),
        ),
        (7, "crates/pinloom-app/src/window/long.rs", long),
        (8, "ui/src/lib/b.ts", "go().catch(() => {});\n".into()),
        (
            9,
            "fuzz/Cargo.lock",
            "[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\n[[package]]\nname = \"libfuzzer-sys\"\nversion = \"0.4.13\"\n".into(),
        ),
        (
            10,
            "crates/pinloom-store/Cargo.toml",
            "[package]\nname = \"pinloom-store\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\nrusqlite = \"1\"\npinloom-desktop = { path = \"../..\" }\n".into(),
        ),
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

/// The floors' other breaks than the one the table plants: the layer below reaching up, a file
/// on the ground naming a folder, and a room's method opened to the crate.
#[test]
fn the_floors_catch_every_climb() {
    let house = [
        ("crates/pinloom-app/src/base/plan.rs", "use crate::json::PlanView;\n"),
        ("crates/pinloom-app/src/models/profiles.rs", "use crate::base::plan::Planned;\n"),
        ("crates/pinloom-app/src/conversation/send.rs", "use crate::models::profiles;\n"),
        ("crates/pinloom-app/src/open.rs", "use crate::conversation::recover;\n"),
    ];
    assert!(climbing_imports(planted(&house).path()).broken.is_empty());
    for (path, text) in [
        ("crates/pinloom-app/src/base/check.rs", "use crate::models::profiles::named;\n"),
        ("crates/pinloom-app/src/models/ready.rs", "use crate::conversation::send;\n"),
        ("crates/pinloom-app/src/json.rs", "use crate::{base::media, error::ApiError};\n"),
    ] {
        let mut files = house.to_vec();
        files.push((path, text));
        let found = climbing_imports(planted(&files).path());
        assert!(found.broken.iter().any(|line| line.contains(path)), "{path}: {:?}", found.broken);
    }
    let opened = [(
        "crates/pinloom-app/src/sync/mod.rs",
        "impl Pinloom {\n    pub(crate) async fn sync_now(&self) {}\n}\n",
    )];
    let found = methods_across_rooms(planted(&opened).path());
    assert!(
        found.broken.iter().any(|line| line.contains("`sync_now` is pub(crate)")),
        "{:?}",
        found.broken
    );
}
