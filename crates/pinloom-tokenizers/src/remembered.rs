//! Counts remembered across processes, so that a process can answer a count it made before
//! without loading a vocabulary (26 MB of tables for o200k).
//!
//! A window that shows a long thread's plan under an OpenAI model counts nothing but its
//! truncation marker: every message's count is stored with the message. Loading o200k for those
//! few words made the window hold 26 MB more from its first plan until it closed. The marker's
//! fixed words are counted once and remembered here, in the cache folder beside the snapshots;
//! the number between them is counted from its digits ([`Encoding::count_around_number`]).
//!
//! The file is a cache the program writes for itself, like a snapshot: keyed by the same build
//! digest (another build never reads it), checksummed (a damaged file is ignored and written
//! anew), and written beside its place and renamed into it. Texts are kept as 128-bit
//! fingerprints, not as text, so a remembered system context costs 20 bytes.
//!
//! [`Encoding::count_around_number`]: crate::Encoding::count_around_number

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"PLQTCNT1";
/// The most counts kept: the oldest goes first. A plan remembers a handful of texts; this bounds
/// the file (20 KB) whatever asks.
pub(crate) const KEEP: usize = 1024;
/// One entry: a fingerprint and a count.
const ENTRY: usize = 16 + 4;

/// The counts remembered for one encoding, oldest first.
#[derive(Debug)]
pub(crate) struct Remembered {
    file: Option<PathBuf>,
    order: Vec<u128>,
    counts: HashMap<u128, u32>,
}

impl Remembered {
    /// The counts in `file`, or none when it is missing or damaged; `None` keeps them in this
    /// process only.
    pub(crate) fn open(file: Option<PathBuf>) -> Remembered {
        let mut remembered = Remembered { file, order: Vec::new(), counts: HashMap::new() };
        let read = remembered.file.as_deref().and_then(|file| std::fs::read(file).ok());
        for (fingerprint, count) in read.as_deref().and_then(decode).unwrap_or_default() {
            if remembered.counts.insert(fingerprint, count).is_none() {
                remembered.order.push(fingerprint);
            }
        }
        remembered
    }

    /// The count of `text` remembered, if it was.
    pub(crate) fn get(&self, text: &str) -> Option<usize> {
        self.counts.get(&fingerprint(text)).map(|count| *count as usize)
    }

    /// Remembers that `text` counts `count`, and saves the file when that is new.
    pub(crate) fn remember(&mut self, text: &str, count: usize) {
        let Ok(count) = u32::try_from(count) else { return };
        let fingerprint = fingerprint(text);
        if self.counts.insert(fingerprint, count) == Some(count) {
            return;
        }
        self.order.retain(|kept| *kept != fingerprint);
        self.order.push(fingerprint);
        if self.order.len() > KEEP {
            let gone = self.order.remove(0);
            self.counts.remove(&gone);
        }
        if let Some(file) = &self.file {
            crate::snapshots::write(file, &self.encode());
        }
    }

    /// How many counts are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(MAGIC.len() + 4 + self.order.len() * ENTRY + 8);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(self.order.len() as u32).to_le_bytes());
        for fingerprint in &self.order {
            bytes.extend_from_slice(&fingerprint.to_le_bytes());
            bytes.extend_from_slice(&self.counts[fingerprint].to_le_bytes());
        }
        let sum = checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes
    }
}

/// The file of `encoding`'s remembered counts in `folder`, for this build.
pub(crate) fn file(folder: &Path, encoding: &str) -> PathBuf {
    folder.join(format!("{encoding}-{}.counts", env!("PINLOOM_QUICKTOK_SNAPSHOT_KEY")))
}

/// The entries of a file [`Remembered::encode`] wrote, or `None` if it is not one whole.
fn decode(bytes: &[u8]) -> Option<Vec<(u128, u32)>> {
    let body_end = bytes.len().checked_sub(8)?;
    let (body, sum) = bytes.split_at(body_end);
    if checksum(body).to_le_bytes() != sum || body.get(..MAGIC.len())? != MAGIC {
        return None;
    }
    let count = u32::from_le_bytes(body.get(8..12)?.try_into().ok()?) as usize;
    let entries = body.get(12..)?;
    if entries.len() != count.checked_mul(ENTRY)? {
        return None;
    }
    entries
        .chunks_exact(ENTRY)
        .map(|entry| {
            let (fingerprint, count) = entry.split_at(16);
            Some((
                u128::from_le_bytes(fingerprint.try_into().ok()?),
                u32::from_le_bytes(count.try_into().ok()?),
            ))
        })
        .collect()
}

/// FNV-1a over 128 bits, of the text's length and then its bytes: not adversarial input (the
/// texts are the program's own settings), and at 128 bits two texts a person writes do not meet.
pub(crate) fn fingerprint(text: &str) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let length = (text.len() as u64).to_le_bytes();
    length
        .iter()
        .chain(text.as_bytes())
        .fold(OFFSET, |hash, byte| (hash ^ u128::from(*byte)).wrapping_mul(PRIME))
}

/// FNV-1a over 64 bits: tells a damaged file from a whole one.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::{KEEP, Remembered, fingerprint};

    fn scratch_file(name: &str) -> std::path::PathBuf {
        let folder = std::env::temp_dir()
            .join(format!("pinloom-tokenizer-counts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        folder.join("o200k_base-test.counts")
    }

    #[test]
    fn a_count_remembered_is_read_back_by_the_next_process() {
        let file = scratch_file("roundtrip");
        let mut first = Remembered::open(Some(file.clone()));
        assert_eq!(first.get("[… "), None);
        first.remember("[… ", 2);
        first.remember(" earlier messages omitted to fit the context window …]", 11);
        let next = Remembered::open(Some(file.clone()));
        assert_eq!(next.get("[… "), Some(2));
        assert_eq!(next.get(" earlier messages omitted to fit the context window …]"), Some(11));
        assert_eq!(next.get("[…"), None, "another text is not confused with it");
        let _ = std::fs::remove_dir_all(file.parent().expect("a folder"));
    }

    #[test]
    fn a_damaged_file_is_ignored_and_written_anew() {
        let file = scratch_file("damaged");
        let mut first = Remembered::open(Some(file.clone()));
        first.remember("one", 1);
        first.remember("two words", 2);
        let good = std::fs::read(&file).expect("saved");
        let mut flipped = good.clone();
        flipped[12] ^= 0x01;
        for (what, bytes) in [
            ("one bit changed", flipped),
            ("cut short", good[..good.len() - 3].to_vec()),
            ("empty", Vec::new()),
            ("a snapshot's start", b"PLQTSNP1 tables".to_vec()),
        ] {
            std::fs::write(&file, &bytes).expect("writes");
            let mut read = Remembered::open(Some(file.clone()));
            assert_eq!(read.get("one"), None, "{what}: nothing is believed");
            read.remember("one", 1);
            assert_eq!(Remembered::open(Some(file.clone())).get("one"), Some(1), "{what}");
        }
        let _ = std::fs::remove_dir_all(file.parent().expect("a folder"));
    }

    #[test]
    fn the_oldest_count_goes_when_too_many_are_kept() {
        let file = scratch_file("bounded");
        let mut remembered = Remembered::open(Some(file.clone()));
        for n in 0..=KEEP {
            remembered.remember(&format!("text {n}"), n);
        }
        assert_eq!(remembered.len(), KEEP);
        assert_eq!(remembered.get("text 0"), None, "the oldest went");
        assert_eq!(remembered.get(&format!("text {KEEP}")), Some(KEEP));
        let read = Remembered::open(Some(file.clone()));
        assert_eq!((read.len(), read.get("text 1")), (KEEP, Some(1)));
        let _ = std::fs::remove_dir_all(file.parent().expect("a folder"));
    }

    #[test]
    fn fingerprints_tell_texts_apart() {
        let texts = ["", " ", "  ", "a", "b", "ab", "ba", "[… ", "[…", " earlier", "earlier "];
        let mut seen = std::collections::HashSet::new();
        for text in texts {
            assert!(seen.insert(fingerprint(text)), "{text:?}");
        }
    }
}
