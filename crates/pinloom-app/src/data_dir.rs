//! Where Pinloom keeps its data.
//!
//! The OS app-data folder by default; a flag or an environment variable moves it, so that tests
//! (and people who keep separate collections) never touch the real one.

use std::ffi::OsString;
use std::path::PathBuf;

/// The command-line flag that chooses the data folder: `--data-dir PATH` or `--data-dir=PATH`.
pub const DATA_DIR_FLAG: &str = "--data-dir";

/// The environment variable that chooses the data folder when the flag is absent.
pub const DATA_DIR_ENV: &str = "PINLOOM_DATA_DIR";

/// The desktop app's identifier (`tauri.conf.json`). Its data folder is the OS data folder plus
/// this, which is how the command line finds the app's database.
pub const APP_IDENTIFIER: &str = "dev.pinloom.desktop";

/// The database's file name inside the data folder.
pub const DATABASE_FILE_NAME: &str = "pinloom.sqlite3";

/// Chooses the data folder: the flag wins over the environment variable, which wins over the OS
/// default. An empty value counts as absent, so `PINLOOM_DATA_DIR=` does not mean "here".
///
/// `args` are the process arguments without the program name.
pub fn resolve_data_dir(
    args: impl IntoIterator<Item = OsString>,
    env_value: Option<OsString>,
    os_default: impl FnOnce() -> Option<PathBuf>,
) -> anyhow::Result<PathBuf> {
    let mut args = args.into_iter();
    let mut from_flag = None;
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str() else { continue };
        if arg == DATA_DIR_FLAG {
            let value = args.next().filter(|value| !value.is_empty()).ok_or_else(|| {
                anyhow::anyhow!("{DATA_DIR_FLAG} needs a folder: {DATA_DIR_FLAG} /path/to/folder")
            })?;
            from_flag = Some(PathBuf::from(value));
        } else if let Some(value) =
            arg.strip_prefix(DATA_DIR_FLAG).and_then(|v| v.strip_prefix('='))
        {
            anyhow::ensure!(
                !value.is_empty(),
                "{DATA_DIR_FLAG} needs a folder: {DATA_DIR_FLAG}=/path/to/folder"
            );
            from_flag = Some(PathBuf::from(value));
        }
    }
    if let Some(dir) = from_flag {
        return Ok(dir);
    }
    if let Some(dir) = env_value.filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    os_default().ok_or_else(|| {
        anyhow::anyhow!(
            "this system reports no app-data folder; start Pinloom with {DATA_DIR_FLAG} PATH or set {DATA_DIR_ENV}"
        )
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::resolve_data_dir;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn os_default() -> Option<PathBuf> {
        Some(PathBuf::from("/os/default"))
    }

    #[test]
    fn flag_beats_environment_beats_os_default() {
        let env = Some(OsString::from("/from/env"));
        let dir = resolve_data_dir(args(&["--data-dir", "/from/flag"]), env.clone(), os_default);
        assert_eq!(dir.unwrap(), PathBuf::from("/from/flag"));
        let dir = resolve_data_dir(args(&["--data-dir=/from/flag2"]), env.clone(), os_default);
        assert_eq!(dir.unwrap(), PathBuf::from("/from/flag2"));
        let dir = resolve_data_dir(args(&["--unrelated"]), env, os_default);
        assert_eq!(dir.unwrap(), PathBuf::from("/from/env"));
        let dir = resolve_data_dir(args(&[]), None, os_default);
        assert_eq!(dir.unwrap(), PathBuf::from("/os/default"));
    }

    #[test]
    fn empty_environment_value_is_ignored() {
        let dir = resolve_data_dir(args(&[]), Some(OsString::new()), os_default);
        assert_eq!(dir.unwrap(), PathBuf::from("/os/default"));
    }

    #[test]
    fn flag_without_a_folder_says_how_to_use_it() {
        let error = resolve_data_dir(args(&["--data-dir"]), None, os_default).unwrap_err();
        assert!(error.to_string().contains("--data-dir /path/to/folder"), "{error}");
        let error = resolve_data_dir(args(&["--data-dir="]), None, os_default).unwrap_err();
        assert!(error.to_string().contains("--data-dir=/path/to/folder"), "{error}");
    }

    #[test]
    fn no_folder_anywhere_names_both_ways_to_give_one() {
        let error = resolve_data_dir(args(&[]), None, || None).unwrap_err().to_string();
        assert!(error.contains("--data-dir") && error.contains("PINLOOM_DATA_DIR"), "{error}");
    }
}
