//! How attached files and folders read in a context, and the one rule for which paths a folder
//! listing leaves out (also used when a folder is walked as it is attached).

use crate::settings::Settings;

/// Seed 004's file block.
pub fn file_block(path: &str, content: &str) -> String {
    format!("--- file: {path} ---\n{content}")
}

/// One page of a PDF, marked with its file and number, so a page kept without its neighbours
/// still says where it comes from.
pub fn pdf_page_block(path: &str, page: usize, of: usize, content: &str) -> String {
    format!("--- file: {path}, page {page} of {of} ---\n{content}")
}

/// A folder listing: at most `max_folder_entries` entries, excluded patterns left out.
pub fn folder_listing(folder: &str, entries: &[String], settings: &Settings) -> String {
    let mut out = format!("--- folder: {folder} ---");
    let shown = entries
        .iter()
        .filter(|entry| !excluded_from_listing(&settings.folder_exclude, entry))
        .take(settings.max_folder_entries);
    for entry in shown {
        out.push('\n');
        out.push_str(entry);
    }
    out
}

/// Whether `path` (relative, `/`-separated; a folder's ends with `/`) is left out of a folder
/// listing by `patterns`: the one rule for both walking a folder when it is attached and showing
/// its listing in a context.
pub fn excluded_from_listing(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| glob_matches(pattern, path))
}

/// The two glob shapes seed 004's exclusions use: `**/name/**` (a path component) and `**/*.ext`
/// (a file-name suffix); anything else matches the whole path literally.
fn glob_matches(pattern: &str, path: &str) -> bool {
    if let Some(name) = pattern.strip_prefix("**/").and_then(|p| p.strip_suffix("/**")) {
        return path.split('/').any(|c| c == name);
    }
    if let Some(suffix) = pattern.strip_prefix("**/*") {
        return path.rsplit('/').next().is_some_and(|f| f.ends_with(suffix));
    }
    pattern == path
}
