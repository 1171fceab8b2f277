//! The house rules, checked on the source itself (as rust-analyzer's tidy test checks its own):
//! what ARCHITECTURE.md promises about the code's shape, made a test so that it stays true.
//!
//! - only the store knows SQL, only the providers speak HTTP;
//! - the application layer's areas are rooms: none imports a sibling, the boundary types import
//!   no area, and everything an area shares with another lives in the layer below them (`base`);
//! - no function in `pinloom-app` runs over 100 lines;
//! - the window never swallows an error with a `.catch` or `catch` that drops it.
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

fn sql_outside_the_store(root: &Path) -> Vec<String> {
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
    let mut broken = Vec::new();
    for (krate, path) in product_rust_files(root) {
        if krate == "pinloom-store" {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            if let Some(word) = SQL.iter().find(|word| line.contains(*word)) {
                broken.push(format!("{}:{number}: `{}` ({word})", shown(root, &path), line.trim()));
            }
        }
    }
    broken
}

fn http_outside_the_providers(root: &Path) -> Vec<String> {
    const HTTP: [&str; 5] = ["reqwest", "hyper::", "ureq", "TcpStream", "http::"];
    let mut broken = Vec::new();
    for (krate, path) in product_rust_files(root) {
        if krate == "pinloom-providers" {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            if let Some(word) = HTTP.iter().find(|word| line.contains(*word)) {
                broken.push(format!("{}:{number}: `{}` ({word})", shown(root, &path), line.trim()));
            }
        }
    }
    // A crate that cannot name an HTTP client cannot speak HTTP: only the providers (and the
    // tests' scripted server) depend on one.
    for manifest in files_under(&root.join("crates"), &["Cargo.toml"]) {
        if manifest.starts_with(root.join("crates/pinloom-providers"))
            || manifest.starts_with(root.join("crates/pinloom-test-server"))
        {
            continue;
        }
        let text = fs::read_to_string(&manifest).unwrap();
        for (number, line) in code_lines(&text) {
            if ["reqwest", "hyper", "ureq"].iter().any(|client| line.starts_with(client)) {
                broken.push(format!("{}:{number}: `{}`", shown(root, &manifest), line.trim()));
            }
        }
    }
    broken
}

/// The application layer's areas: its folders, the shared layer aside.
fn app_areas(app_src: &Path) -> Vec<String> {
    let mut areas: Vec<String> = fs::read_dir(app_src)
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != SHARED_LAYER)
        .collect();
    areas.sort();
    areas
}

fn sibling_imports(root: &Path) -> Vec<String> {
    let app_src = root.join("crates/pinloom-app/src");
    let areas = app_areas(&app_src);
    let mut broken = Vec::new();
    // The boundary types (`json.rs`) and the shared layer are below every area: they name none.
    let below: Vec<(String, PathBuf)> =
        std::iter::once(("json".to_owned(), app_src.join("json.rs")))
            .chain(
                files_under(&app_src.join(SHARED_LAYER), &[".rs"])
                    .into_iter()
                    .map(|file| (SHARED_LAYER.to_owned(), file)),
            )
            .collect();
    let within: Vec<(String, PathBuf)> = areas
        .iter()
        .flat_map(|area| {
            files_under(&app_src.join(area), &[".rs"]).into_iter().map(|file| (area.clone(), file))
        })
        .chain(below)
        .collect();
    for (home, path) in within {
        let text = fs::read_to_string(&path).unwrap();
        for (number, line) in code_lines(&text) {
            for area in areas.iter().filter(|area| **area != home) {
                if line.contains(&format!("crate::{area}::"))
                    || line.contains(&format!("crate::{area}}}"))
                    || line.contains(&format!("crate::{area};"))
                {
                    broken.push(format!(
                        "{}:{number}: {home} reaches into {area}: `{}`",
                        shown(root, &path),
                        line.trim()
                    ));
                }
            }
        }
    }
    broken
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

fn functions_over_a_hundred_lines(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for path in files_under(&root.join("crates/pinloom-app/src"), &[".rs"]) {
        let text = fs::read_to_string(&path).unwrap();
        for (line, name, length) in long_functions(&text) {
            broken.push(format!("{}:{line}: `{name}` runs {length} lines", shown(root, &path)));
        }
    }
    broken
}

/// A `.catch(…)` handler or a `catch` block that does nothing with what was thrown: the person
/// would never learn that something failed.
fn swallowed_errors(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for path in files_under(&root.join("ui/src"), &[".ts", ".svelte"]) {
        if path.to_string_lossy().ends_with(".test.ts") {
            continue;
        }
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
    broken
}

#[test]
fn the_house_rules_hold() {
    let root = repo_root();
    let text = [
        report("SQL outside pinloom-store", &sql_outside_the_store(&root)),
        report("HTTP outside pinloom-providers", &http_outside_the_providers(&root)),
        report("an area of pinloom-app reaching into a sibling", &sibling_imports(&root)),
        report(
            &format!("functions in pinloom-app over {LONGEST_FUNCTION} lines"),
            &functions_over_a_hundred_lines(&root),
        ),
        report("errors the window swallows", &swallowed_errors(&root)),
    ]
    .concat();
    assert!(text.is_empty(), "the house rules are broken:\n{text}");
}

/// The checks themselves can fail: each finds what it is for in a text made to break it.
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
