//! A sealed folder's key. The folder made with a passphrase gets an X25519 key of its own, which
//! every pack is encrypted to; the key itself is in the folder only encrypted with the passphrase
//! (age's scrypt, `keys/passphrase.age`), so a new machine joins with the passphrase alone, and
//! each machine keeps the key in its OS keyring after the first time (the passphrase is asked
//! once; scrypt's second of work is not paid on every sync). `keys/check.age`, encrypted to the
//! key, tells a key kept from an earlier folder at the same remote from this folder's.

use std::path::Path;

use age::secrecy::{ExposeSecret, SecretString};
use age::x25519;
use pinloom_providers::keys::Keyring;

use crate::sync::folder::{self, Format};
use crate::sync::packs::Seal;

/// Where the folder's key is kept, encrypted with the passphrase.
const PASSPHRASE_FILE: &str = "keys/passphrase.age";

/// A small file encrypted to the folder's key: a key that opens it is this folder's.
const CHECK_FILE: &str = "keys/check.age";

/// What the check file says, once opened.
const CHECK_TEXT: &[u8] = b"pinloom sync folder key\n";

/// The largest key file read.
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// scrypt's work factor for a new folder's key file: 2^18, 256 MiB and about a second here, paid
/// once per machine (age would pick it from the machine's speed, which another machine may not
/// match).
const WORK_FACTOR: u8 = 18;

/// The greatest work factor accepted from a key file: 2^20 is 1 GiB of memory, so a remote cannot
/// make a join take minutes or a machine's memory.
const MAX_WORK_FACTOR: u8 = 20;

/// What opens a folder: the keyring that keeps its key, and the passphrase when the person gave
/// one for this sync.
#[derive(Clone)]
pub(in crate::sync) struct Unlock {
    pub(in crate::sync) keyring: Keyring,
    pub(in crate::sync) passphrase: Option<SecretString>,
}

/// Why a folder's key could not be had.
#[derive(Debug, thiserror::Error)]
pub(in crate::sync) enum KeyError {
    /// A sealed folder, and no key here yet.
    #[error(
        "this remote is encrypted: give its passphrase once on this machine (`pinloom sync --passphrase`, which reads it from standard input, or Settings → Sync)"
    )]
    NeedsPassphrase,
    /// The passphrase does not open the folder's key.
    #[error(
        "the passphrase does not open this remote's key; nothing was written: check it and sync again"
    )]
    WrongPassphrase,
    /// A passphrase for a folder that holds plain text already.
    #[error(
        "this remote already holds your trees unencrypted (in its history too), so a passphrase cannot protect them there: to encrypt, sync with the passphrase to a new, empty remote"
    )]
    AlreadyPlain,
    /// A folder known here as encrypted whose format.json now says it is not.
    #[error(
        "this remote was encrypted, and its format.json now says it is not (someone changed it): nothing was written, so nothing goes to it unencrypted; check the remote"
    )]
    Unsealed,
    /// The key file is not one.
    #[error(
        "{PASSPHRASE_FILE} in this remote cannot be read ({0}); the remote holds something else: choose another remote"
    )]
    Damaged(String),
}

/// The seal of the folder (`format` as `folder::check_format` read or wrote it), its key made
/// when the folder is new and sealed; the name it is kept under in the keyring is `entry`. A
/// folder `was_sealed` here stays sealed: a format.json that says otherwise is refused.
/// Returns notes for the report (a keyring that would not keep the key).
pub(in crate::sync) fn seal_of(
    folder: &Path,
    format: Format,
    was_sealed: bool,
    unlock: &Unlock,
    entry: &str,
) -> Result<(Seal, Vec<String>), KeyError> {
    if was_sealed && !format.sealed {
        return Err(KeyError::Unsealed);
    }
    if !format.sealed {
        return match &unlock.passphrase {
            Some(_) if !format.new && has_packs_or_records(folder) => Err(KeyError::AlreadyPlain),
            _ => Ok((Seal::Plain, Vec::new())),
        };
    }
    let mut notes = Vec::new();
    if format.new {
        let passphrase = unlock.passphrase.clone().ok_or(KeyError::NeedsPassphrase)?;
        let identity = x25519::Identity::generate();
        write_key_files(folder, &identity, passphrase).map_err(KeyError::Damaged)?;
        keep(unlock, entry, &identity, &mut notes);
        return Ok((Seal::folder_key(identity), notes));
    }
    let kept = unlock.keyring.load_secret(entry).ok().flatten();
    if let Some(identity) = kept.and_then(|text| text.parse::<x25519::Identity>().ok())
        && opens_check(folder, &identity)
    {
        return Ok((Seal::folder_key(identity), notes));
    }
    let passphrase = unlock.passphrase.clone().ok_or(KeyError::NeedsPassphrase)?;
    let identity = open_with(folder, passphrase)?;
    keep(unlock, entry, &identity, &mut notes);
    Ok((Seal::folder_key(identity), notes))
}

/// Whether the folder holds anything written (a plain folder given a passphrase).
fn has_packs_or_records(folder: &Path) -> bool {
    ["packs", "records", "ops"].iter().any(|dir| {
        std::fs::read_dir(folder.join(dir)).is_ok_and(|mut entries| entries.next().is_some())
    })
}

fn keep(unlock: &Unlock, entry: &str, identity: &x25519::Identity, notes: &mut Vec<String>) {
    let secret = identity.to_string();
    let saved = unlock.keyring.save_secret(entry, secret.expose_secret());
    // Some keyrings report a failure of a later step and keep the secret: what reads back is
    // kept. Some take it and cannot give it back (the kernel's, to a process outside a login
    // session): what does not read back is not.
    let kept = || unlock.keyring.load_secret(entry).ok().flatten();
    if let Err(error) = saved
        && kept().as_deref() != Some(secret.expose_secret())
    {
        notes.push(format!("The remote's key could not be kept on this machine: {error}"));
    }
}

fn write_key_files(
    folder: &Path,
    identity: &x25519::Identity,
    passphrase: SecretString,
) -> Result<(), String> {
    let secret = identity.to_string();
    let mut scrypt = age::scrypt::Recipient::new(passphrase);
    scrypt.set_work_factor(WORK_FACTOR);
    let by_passphrase = age::Encryptor::with_recipients(std::iter::once(&scrypt as _))
        .map_err(|e| e.to_string())?;
    let locked = encrypt(by_passphrase, secret.expose_secret().as_bytes())?;
    let recipient = identity.to_public();
    let to = std::iter::once(&recipient as &dyn age::Recipient);
    let check =
        encrypt(age::Encryptor::with_recipients(to).map_err(|e| e.to_string())?, CHECK_TEXT)?;
    folder::write_once(folder, Path::new(PASSPHRASE_FILE), &locked).map_err(|e| e.to_string())?;
    folder::write_once(folder, Path::new(CHECK_FILE), &check).map_err(|e| e.to_string())
}

/// `plain` encrypted by `encryptor` (to a passphrase, or to recipients).
pub(in crate::sync) fn encrypt(encryptor: age::Encryptor, plain: &[u8]) -> Result<Vec<u8>, String> {
    let mut sealed = Vec::new();
    let mut writer = encryptor.wrap_output(&mut sealed).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut writer, plain).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(sealed)
}

fn read_key_file(folder: &Path, file: &str) -> Result<Vec<u8>, String> {
    let mut taken = folder::Taken::unbounded();
    folder::read_counted(folder, Path::new(file), MAX_KEY_FILE_BYTES, &mut taken)
}

/// `bytes` opened with `identity`, at most `limit` bytes of them read.
pub(in crate::sync) fn decrypt(
    bytes: &[u8],
    identity: &dyn age::Identity,
    limit: u64,
) -> Result<Vec<u8>, age::DecryptError> {
    let decryptor = age::Decryptor::new_buffered(bytes)?;
    let mut reader = decryptor.decrypt(std::iter::once(identity))?;
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut reader, limit), &mut plain)
        .map_err(age::DecryptError::from)?;
    Ok(plain)
}

fn opens_check(folder: &Path, identity: &x25519::Identity) -> bool {
    read_key_file(folder, CHECK_FILE)
        .ok()
        .and_then(|bytes| decrypt(&bytes, identity, MAX_KEY_FILE_BYTES).ok())
        .is_some_and(|plain| plain == CHECK_TEXT)
}

fn open_with(folder: &Path, passphrase: SecretString) -> Result<x25519::Identity, KeyError> {
    let bytes = read_key_file(folder, PASSPHRASE_FILE).map_err(KeyError::Damaged)?;
    let mut scrypt = age::scrypt::Identity::new(passphrase);
    scrypt.set_max_work_factor(MAX_WORK_FACTOR);
    let plain = decrypt(&bytes, &scrypt, MAX_KEY_FILE_BYTES).map_err(|error| match error {
        age::DecryptError::DecryptionFailed | age::DecryptError::NoMatchingKeys => {
            KeyError::WrongPassphrase
        }
        other => KeyError::Damaged(other.to_string()),
    })?;
    let text = String::from_utf8(plain).map_err(|_| KeyError::Damaged("not a key".into()))?;
    text.trim().parse().map_err(|_| KeyError::Damaged("not a key".into()))
}
