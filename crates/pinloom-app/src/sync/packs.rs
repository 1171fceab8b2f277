//! A pack: what one sync adds to a folder, as one file written once (format 2 of the folder).
//!
//! Its plain text is a header line, then one line per record, operation or share:
//!
//! ```text
//! {"pack":"<its id>","device":"<writer>","lines":3,"bytes":812,"replaces":[]}
//! {"record":{"kind":"message",...}}
//! {"op":{"id":"...","target":"...",...}}
//! {"share":{"id":"share-...",...}}
//! ```
//!
//! `bytes` is the length of the lines after the header, which a reader never reads past (a pack
//! that holds more than it states is refused, not inflated into memory). The header names the
//! key that signed it (`signer`), and a last line, `{"signature":"…"}`, signs the header and the
//! lines as they are (`signing.rs`): a pack whose signature does not cover it is not read. The whole is compressed
//! with zstd and, in a sealed folder, encrypted with age to the folder's recipients, so the
//! remote sees neither words nor sizes of single messages. A pack that folds smaller ones together
//! names them in `replaces`: a machine that reads it knows it holds those too.

use std::io::{BufRead, Read, Write};

use age::x25519;
use pinloom_store::{SyncOp, SyncRecord};
use serde::{Deserialize, Serialize};

use crate::sync::folder::ShareFile;
use crate::sync::signing::{DeviceKey, verify};

/// The most a pack's lines may state: more than any one sync writes into a pack (packs are cut
/// at [`PACK_TARGET_BYTES`]; a single record is at most 32 MiB).
pub(in crate::sync) const MAX_PACK_BYTES: u64 = 128 * 1024 * 1024;

/// Where a writer cuts its lines into another pack: a few MB once compressed.
pub(in crate::sync) const PACK_TARGET_BYTES: usize = 8 * 1024 * 1024;

/// The largest header line read (a compaction names the packs it replaces there).
const MAX_HEADER_BYTES: u64 = 4 * 1024 * 1024;

/// zstd's level: its default, which compresses a tree's JSON about 5:1 at hundreds of MB/s.
const LEVEL: i32 = 3;

/// One line of a pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::sync) enum PackLine {
    /// A record, written once.
    Record(SyncRecord),
    /// A field's change.
    Op(SyncOp),
    /// A tree shared with a team (the person's own remote only).
    Share(ShareFile),
}

impl PackLine {
    /// The id the database knows it by (in `sync_known`).
    pub(in crate::sync) fn id(&self) -> &str {
        match self {
            PackLine::Record(record) => record.id(),
            PackLine::Op(op) => &op.id,
            PackLine::Share(share) => &share.id,
        }
    }
}

/// A pack's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::sync) struct PackHeader {
    /// Its id, which is its file's name: a pack copied under another name is refused.
    pub(in crate::sync) pack: String,
    /// The device that wrote it.
    pub(in crate::sync) device: String,
    /// How many lines follow.
    pub(in crate::sync) lines: u64,
    /// How many bytes they take.
    pub(in crate::sync) bytes: u64,
    /// The packs it holds the lines of (a compaction's).
    #[serde(default)]
    pub(in crate::sync) replaces: Vec<String>,
    /// The public key that signed it, in hex.
    #[serde(default)]
    pub(in crate::sync) signer: String,
}

/// A pack's last line.
#[derive(Debug, Serialize, Deserialize)]
struct PackSignature {
    signature: String,
}

/// The largest last line read.
const MAX_SIGNATURE_BYTES: u64 = 1024;

/// How a folder's packs are kept from whoever holds the remote.
#[derive(Clone)]
pub(in crate::sync) enum Seal {
    /// Compressed only (a folder made before encryption, or without a passphrase).
    Plain,
    /// Encrypted with age to `recipients`, read with `identity`.
    Age {
        /// What opens the folder's packs.
        identity: Box<x25519::Identity>,
        /// Whom each new pack is encrypted to.
        recipients: Vec<x25519::Recipient>,
    },
}

impl Seal {
    /// The seal of a folder whose packs are all encrypted to one key, `identity`'s.
    pub(in crate::sync) fn folder_key(identity: x25519::Identity) -> Seal {
        let recipients = vec![identity.to_public()];
        Seal::Age { identity: Box::new(identity), recipients }
    }
}

/// Why a pack was not read, in words for the report.
pub(in crate::sync) type Unread = String;

/// A pack as read.
#[derive(Debug)]
pub(in crate::sync) struct Pack {
    pub(in crate::sync) header: PackHeader,
    /// Its lines, each read or refused with why (a line a newer Pinloom wrote, a damaged one).
    pub(in crate::sync) lines: Vec<Result<PackLine, Unread>>,
}

/// The lines of one pack to be, as JSON, with their ids.
#[derive(Debug, Default)]
pub(in crate::sync) struct CutPack<'a> {
    pub(in crate::sync) bodies: Vec<Vec<u8>>,
    pub(in crate::sync) ids: Vec<&'a str>,
}

/// Lines cut into packs of about [`PACK_TARGET_BYTES`] each, every line whole.
pub(in crate::sync) fn cut(lines: &[PackLine]) -> Vec<CutPack<'_>> {
    // A first sync writes a whole tree's lines: they are turned into JSON on every core.
    let mut jsons: Vec<(&PackLine, Vec<u8>)> =
        lines.iter().map(|line| (line, Vec::new())).collect();
    crate::runtime::on_every_core(&mut jsons, |(line, json)| {
        *json = serde_json::to_vec(line).unwrap_or_default();
    });
    let mut packs = Vec::new();
    let mut current = CutPack::default();
    let mut size = 0;
    for (line, json) in jsons {
        if size > 0 && size + json.len() > PACK_TARGET_BYTES {
            packs.push(std::mem::take(&mut current));
            size = 0;
        }
        size += json.len() + 1;
        current.bodies.push(json);
        current.ids.push(line.id());
    }
    if !current.ids.is_empty() {
        packs.push(current);
    }
    packs
}

/// A pack's bytes as a folder holds them: its header and `lines` (each one JSON value without a
/// line break), compressed, then sealed.
pub(in crate::sync) fn encode(
    id: &str,
    device: &str,
    lines: &[Vec<u8>],
    replaces: Vec<String>,
    seal: &Seal,
    key: &DeviceKey,
) -> std::io::Result<Vec<u8>> {
    let bytes: usize = lines.iter().map(|line| line.len() + 1).sum();
    let header = PackHeader {
        pack: id.to_owned(),
        device: device.to_owned(),
        lines: lines.len() as u64,
        bytes: bytes as u64,
        replaces,
        signer: key.public(),
    };
    let mut plain = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    plain.push(b'\n');
    plain.reserve(bytes + 160);
    for line in lines {
        plain.extend_from_slice(line);
        plain.push(b'\n');
    }
    let signature = PackSignature { signature: key.sign(&plain) };
    plain.extend(serde_json::to_vec(&signature).map_err(std::io::Error::other)?);
    plain.push(b'\n');
    let compressed = zstd::bulk::compress(&plain, LEVEL)?;
    match seal {
        Seal::Plain => Ok(compressed),
        Seal::Age { recipients, .. } => {
            let to = recipients.iter().map(|recipient| recipient as &dyn age::Recipient);
            let encryptor = age::Encryptor::with_recipients(to).map_err(std::io::Error::other)?;
            let mut sealed = Vec::with_capacity(compressed.len() + 256);
            let mut writer = encryptor.wrap_output(&mut sealed)?;
            writer.write_all(&compressed)?;
            writer.finish()?;
            Ok(sealed)
        }
    }
}

/// Why a pack encrypted to other keys is not read (in a team's folder: one written before this
/// machine was a member).
pub(in crate::sync) const NOT_FOR_THIS_KEY: &str = "it is encrypted to other keys than this folder's (a removed member's, or a wrong key); not read";

/// The first bytes of an age file.
const AGE_MAGIC: &[u8] = b"age-encryption.org/v1\n";

/// Reads a pack named `id` from its bytes: opened with the folder's seal (a plain pack in a
/// sealed folder is refused, as one a remote could have put there), never inflated past what
/// its header states nor past [`MAX_PACK_BYTES`].
pub(in crate::sync) fn decode(id: &str, bytes: &[u8], seal: &Seal) -> Result<Pack, Unread> {
    let sealed = bytes.starts_with(AGE_MAGIC);
    match seal {
        Seal::Plain if sealed => {
            Err("it is encrypted, and this folder is not: not written by Pinloom for it".into())
        }
        Seal::Plain => read_compressed(id, bytes),
        Seal::Age { .. } if !sealed => Err(
            "it is not encrypted, and every pack of this folder is: someone other than its members put it there; not read"
                .into(),
        ),
        Seal::Age { identity, .. } => {
            let decryptor = age::Decryptor::new_buffered(bytes)
                .map_err(|error| format!("it is not a readable age file ({error})"))?;
            let mut reader = decryptor
                .decrypt(std::iter::once(identity.as_ref() as &dyn age::Identity))
                .map_err(|error| match error {
                    age::DecryptError::NoMatchingKeys => NOT_FOR_THIS_KEY.to_owned(),
                    other => format!("it could not be decrypted ({other})"),
                })?;
            let mut compressed = Vec::with_capacity(bytes.len());
            reader
                .read_to_end(&mut compressed)
                .map_err(|error| format!("it could not be decrypted ({error})"))?;
            read_compressed(id, &compressed)
        }
    }
}

fn read_compressed(id: &str, compressed: &[u8]) -> Result<Pack, Unread> {
    let decoder = zstd::stream::read::Decoder::new(compressed)
        .map_err(|error| format!("it is not a compressed pack ({error})"))?;
    let mut input = std::io::BufReader::new(decoder);
    let mut first = Vec::new();
    (&mut input)
        .take(MAX_HEADER_BYTES)
        .read_until(b'\n', &mut first)
        .map_err(|error| format!("it is not a compressed pack ({error})"))?;
    let header: PackHeader = serde_json::from_slice(&first)
        .map_err(|_| "its first line is not a pack's header".to_owned())?;
    if header.pack != id {
        return Err(format!("it calls itself {:?}, not its name", shown(&header.pack)));
    }
    if header.bytes > MAX_PACK_BYTES {
        return Err(format!(
            "it states {} bytes of lines, over the {MAX_PACK_BYTES}-byte limit",
            header.bytes
        ));
    }
    let mut body = Vec::with_capacity(usize::try_from(header.bytes).unwrap_or(0));
    (&mut input)
        .take(header.bytes)
        .read_to_end(&mut body)
        .map_err(|error| format!("its lines could not be read ({error})"))?;
    if (body.len() as u64) < header.bytes {
        return Err(format!("it holds {} of the {} bytes it states", body.len(), header.bytes));
    }
    // After the lines, only their signature: anything longer is more than the pack states.
    let mut last = Vec::new();
    (&mut input)
        .take(MAX_SIGNATURE_BYTES + 1)
        .read_to_end(&mut last)
        .map_err(|error| format!("its signature could not be read ({error})"))?;
    if last.len() as u64 > MAX_SIGNATURE_BYTES {
        return Err(format!("it holds more than the {} bytes it states", header.bytes));
    }
    let signature: PackSignature = serde_json::from_slice(last.trim_ascii_end())
        .map_err(|_| "it is not signed: no Pinloom wrote it".to_owned())?;
    let mut signed = first;
    signed.extend_from_slice(&body);
    verify(&header.signer, &signed, &signature.signature)?;
    let lines: Vec<Result<PackLine, Unread>> = body
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line)
                .map_err(|error| format!("a line this Pinloom cannot read ({error})"))
        })
        .collect();
    if lines.len() as u64 != header.lines {
        return Err(format!("it holds {} lines, not the {} it states", lines.len(), header.lines));
    }
    Ok(Pack { header, lines })
}

/// Text a pack chose, shown rather than obeyed.
fn shown(text: &str) -> String {
    text.chars().take(80).flat_map(char::escape_default).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(id: &str, title: &str) -> PackLine {
        let mut record = crate::sync::folder::tests::tree(id);
        if let SyncRecord::Tree(tree) = &mut record {
            tree.title = title.to_owned();
        }
        PackLine::Record(record)
    }

    fn lines(of: &[PackLine]) -> Vec<Vec<u8>> {
        of.iter().map(|line| serde_json::to_vec(line).unwrap()).collect()
    }

    #[test]
    fn a_sealed_pack_reads_back_and_shows_none_of_its_words() {
        let seal = Seal::folder_key(x25519::Identity::generate());
        let written = [tree("t1", "Secret rivers"), tree("t2", "Hidden deltas")];
        let key = DeviceKey::from_seed(1);
        let bytes = encode("p1", "dev", &lines(&written), vec![], &seal, &key).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        // Words long enough that the random header's base64 cannot hold them by chance.
        assert!(!text.contains("Secret rivers") && !text.contains("Hidden deltas"), "{text}");
        let pack = decode("p1", &bytes, &seal).unwrap();
        let read: Vec<PackLine> = pack.lines.into_iter().map(Result::unwrap).collect();
        assert_eq!(read, written);
        // Another folder's key opens nothing; the name is part of what is checked.
        let other = Seal::folder_key(x25519::Identity::generate());
        assert!(decode("p1", &bytes, &other).unwrap_err().contains("other keys"));
        assert!(decode("p2", &bytes, &seal).unwrap_err().contains("not its name"));
        // A plain pack where packs are sealed, and the other way round, are refused.
        let plain = encode("p1", "dev", &lines(&written), vec![], &Seal::Plain, &key).unwrap();
        assert!(decode("p1", &plain, &seal).unwrap_err().contains("not encrypted"));
        assert!(decode("p1", &bytes, &Seal::Plain).unwrap_err().contains("is encrypted"));
    }

    #[test]
    fn a_pack_holding_more_or_less_than_it_states_or_not_signed_is_refused() {
        let key = DeviceKey::from_seed(1);
        let written = lines(&[tree("t1", "Rivers")]);
        let header = |bytes: u64, lines: u64| {
            serde_json::to_vec(&PackHeader {
                pack: "p1".into(),
                device: "dev".into(),
                lines,
                bytes,
                replaces: vec![],
                signer: key.public(),
            })
            .unwrap()
        };
        // A pack as a writer would make it (signed), with `after` behind its signature.
        let pack = |header: Vec<u8>, body: &[u8], after: &[u8]| {
            let mut plain = header;
            plain.push(b'\n');
            plain.extend_from_slice(body);
            let signature = key.sign(&plain);
            plain.extend(format!("{{\"signature\":\"{signature}\"}}\n").as_bytes());
            plain.extend_from_slice(after);
            zstd::bulk::compress(&plain, LEVEL).unwrap()
        };
        let mut body = written[0].clone();
        body.push(b'\n');
        let stated = body.len() as u64;
        assert!(decode("p1", &pack(header(stated, 1), &body, b""), &Seal::Plain).is_ok());
        // 64 MB of line breaks after what it states is never inflated.
        let bomb = vec![b'\n'; 64 * 1024 * 1024];
        let error = decode("p1", &pack(header(stated, 1), &body, &bomb), &Seal::Plain).unwrap_err();
        assert!(error.contains("more than"), "{error}");
        let error = decode("p1", &pack(header(stated + 5, 1), &body, b""), &Seal::Plain);
        assert!(error.unwrap_err().contains("not signed"));
        let error = decode("p1", &pack(header(stated, 2), &body, b""), &Seal::Plain).unwrap_err();
        assert!(error.contains("lines"), "{error}");
        let error = decode("p1", &pack(header(MAX_PACK_BYTES + 1, 1), &body, b""), &Seal::Plain);
        assert!(error.unwrap_err().contains("limit"));
        // Cut short before its lines end.
        let mut short = header(stated + 400, 1);
        short.push(b'\n');
        short.extend_from_slice(&body);
        let short = zstd::bulk::compress(&short, LEVEL).unwrap();
        assert!(decode("p1", &short, &Seal::Plain).unwrap_err().contains("of the"));
        // Without a signature, or with a line changed after signing, it is not read.
        let mut unsigned = header(stated, 1);
        unsigned.push(b'\n');
        unsigned.extend_from_slice(&body);
        let unsigned = zstd::bulk::compress(&unsigned, LEVEL).unwrap();
        assert!(decode("p1", &unsigned, &Seal::Plain).unwrap_err().contains("not signed"));
        let mut changed = body.clone();
        changed[20] ^= 1;
        let signed = pack(header(stated, 1), &body, b"");
        let mut plain = zstd::stream::decode_all(signed.as_slice()).unwrap();
        let at = plain.windows(body.len()).position(|window| window == body).unwrap();
        plain[at..at + body.len()].copy_from_slice(&changed);
        let tampered = zstd::bulk::compress(&plain, LEVEL).unwrap();
        let error = decode("p1", &tampered, &Seal::Plain).unwrap_err();
        assert!(error.contains("does not cover"), "{error}");
    }

    /// The fuzz target's seed, written by another implementation of the format (Python's
    /// `cryptography` and the zstd command): read back whole, so the format is what it says.
    #[test]
    fn a_pack_written_elsewhere_to_the_format_reads_back() {
        let seed = include_bytes!("../../../../fuzz/seeds/sync_pack/plain-pack");
        let pack = decode("fuzz-pack", &seed[1..], &Seal::Plain).unwrap();
        assert_eq!(pack.lines.len(), 2);
        assert!(pack.lines.iter().all(Result::is_ok));
    }

    #[test]
    fn lines_are_cut_into_packs_whole() {
        let big = "x".repeat(PACK_TARGET_BYTES / 2);
        let written = [tree("t1", &big), tree("t2", &big), tree("t3", "small")];
        let packs = cut(&written);
        assert_eq!(packs.len(), 2);
        assert_eq!(packs[0].ids, ["t1"]);
        assert_eq!(packs[1].ids, ["t2", "t3"]);
    }
}
