//! Builds quicktok-v1 from its source release.
//!
//! quicktok-v1 is a C++ library published on PyPI only (as a source archive and Python wheels);
//! no crate carries it. Its source is not copied into this repository: `./dev` has pip (the
//! registry's own client) download the pinned release's source archive into a download folder
//! shared by every build folder and checkout, once per machine. This build script downloads
//! nothing: it checks the archive's SHA-256 against the digest PyPI lists for it, unpacks it into
//! `OUT_DIR` and compiles the library with `cc`.
//!
//! Offline builds: set `PINLOOM_QUICKTOK_SDIST` to a copy of the archive (it is checked the same
//! way).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use sha2::{Digest, Sha256};

// The one rule for where the cache folder is, which the crate itself follows too.
#[path = "src/cache_folder.rs"]
mod cache_folder;

const RELEASE: &str = "quicktok_v1-0.4.0";
/// The release as pip names it.
const REQUIREMENT: &str = "quicktok-v1==0.4.0";
/// The digest PyPI publishes for the archive (checked 2026-11-25).
const ARCHIVE_SHA256: &str = "284b911dc841a2b809216d65aea2db2ce7f44233843cdc55336d2c00d4c6f509";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cpp");
    println!("cargo:rerun-if-changed=src/framing.rs");
    println!("cargo:rerun-if-changed=src/cache_folder.rs");
    println!("cargo:rerun-if-env-changed=PINLOOM_QUICKTOK_SDIST");
    // Where the download folder is.
    for variable in ["XDG_CACHE_HOME", "LOCALAPPDATA", "HOME"] {
        println!("cargo:rerun-if-env-changed={variable}");
    }

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let archive = archive();
    let source = out.join(RELEASE);
    if !source.join("src/quicktok.cpp").is_file() {
        unpack(&archive, &out);
    }

    // The library reads its vocabularies with `fopen`; the prelude, included before each of its
    // files, sends those reads to `cpp/embedded_files.cpp`, which serves the vocabularies this
    // crate embeds. The release's `quicktok.cpp` is compiled inside `cpp/tokenizer_snapshots.cpp`
    // (which saves and restores the tables it builds) and its C interface is replaced by that
    // file's. No file of the release is edited.
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let prelude = manifest.join("cpp/fopen_from_memory.h");
    let mut library = cc::Build::new();
    library
        .cpp(true)
        .std("c++20")
        .opt_level(3)
        .define("NDEBUG", None)
        .warnings(false)
        .include(source.join("include"))
        .include(source.join("src"))
        .file(manifest.join("cpp/tokenizer_snapshots.cpp"))
        .file(source.join("src/trie2_mb.cpp"));
    if library.get_compiler().is_like_msvc() {
        library.flag(format!("/FI{}", prelude.display()));
    } else {
        library.flag("-include").flag(prelude.display().to_string());
    }
    library.compile("quicktok");

    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .opt_level(2)
        .include(source.join("include"))
        .file(manifest.join("cpp/embedded_files.cpp"))
        .compile("pinloom_quicktok_files");

    println!("cargo:rustc-env=PINLOOM_QUICKTOK_DATA={}", source.join("data").display());
    // Names this build's table snapshots (src/lib.rs): a digest of the release and of the code
    // that writes and frames them, so a snapshot another build wrote is never read.
    let mut writer = Sha256::new().chain_update(ARCHIVE_SHA256);
    for file in ["cpp/tokenizer_snapshots.cpp", "cpp/pinloom_quicktok.h", "src/framing.rs"] {
        writer.update(
            fs::read(manifest.join(file))
                .unwrap_or_else(|error| fail(&format!("cannot read {file}: {error}"))),
        );
    }
    let key: String = writer.finalize().iter().take(8).map(|byte| format!("{byte:02x}")).collect();
    println!("cargo:rustc-env=PINLOOM_QUICKTOK_SNAPSHOT_KEY={key}");
    // The release's reference token ids (made by tiktoken and by the models' own tokenizers),
    // which the tests compare against.
    println!("cargo:rustc-env=PINLOOM_QUICKTOK_VECTORS={}", source.join("test").display());
}

/// The checked release archive: the one named by `PINLOOM_QUICKTOK_SDIST`, or the one `./dev`
/// fetched into the shared download folder. A build step downloads nothing: a missing or damaged
/// archive fails the build with the command that fetches it.
fn archive() -> PathBuf {
    if let Some(given) = env::var_os("PINLOOM_QUICKTOK_SDIST") {
        let given = PathBuf::from(given);
        if let Err(problem) = check(&given) {
            fail(&format!("PINLOOM_QUICKTOK_SDIST={}: {problem}", given.display()));
        }
        return given;
    }
    let folder = download_folder();
    let archive = folder.join(format!("{RELEASE}.tar.gz"));
    println!("cargo:rerun-if-changed={}", archive.display());
    if let Err(problem) = check(&archive) {
        fail(&format!(
            "{problem}. The token counter's source release is fetched once per machine: run \
             `./dev setup`, or `python3 -m pip download --no-deps --no-binary quicktok-v1 --dest \
             {} {REQUIREMENT}`, or set PINLOOM_QUICKTOK_SDIST to a copy of {RELEASE}.tar.gz",
            folder.display()
        ));
    }
    archive
}

/// Where downloads are kept across build folders: the user's cache folder.
fn download_folder() -> PathBuf {
    let cache = cache_folder::user_cache_folder()
        .unwrap_or_else(|| PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")));
    cache.join("pinloom").join("downloads")
}

fn check(archive: &Path) -> Result<(), String> {
    let bytes =
        fs::read(archive).map_err(|error| format!("cannot read {}: {error}", archive.display()))?;
    let digest: String = Sha256::digest(&bytes).iter().map(|byte| format!("{byte:02x}")).collect();
    if digest == ARCHIVE_SHA256 {
        Ok(())
    } else {
        Err(format!(
            "{}: its SHA-256 is {digest}, not the {ARCHIVE_SHA256} PyPI lists for \
             {RELEASE}.tar.gz; delete it",
            archive.display()
        ))
    }
}

fn unpack(archive: &Path, into: &Path) {
    let status = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(into).status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => fail(&format!("unpacking {} failed (tar: {status})", archive.display())),
        Err(error) => fail(&format!("cannot run tar to unpack {}: {error}", archive.display())),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("pinloom-tokenizers: {message}");
    std::process::exit(1);
}
