//! Counts remembered across processes, so that a process can answer a count it made before
//! without loading a vocabulary (26 MB of tables for o200k).
//!
//! A window that shows a long thread's plan under an OpenAI model counts nothing but its
//! truncation marker: every message's count is stored with the message. Loading o200k for those
//! few words made the window hold 26 MB more from its first plan until it closed. The marker's
//! fixed words are counted once and remembered here, in the cache folder beside the snapshots;
//! the number between them is counted from its digits ([`Encoding::count_around_number`]).
//!
//! The file is a cache the program writes for itself, like a snapshot: named by the same build
//! digest (another build never reads it), checksummed (a damaged file is ignored and written
//! anew), and written beside its place and renamed into it. Texts are kept as 128-bit
//! fingerprints with their length in bytes, not as text, so a remembered system context costs
//! 24 bytes.
//!
//! # A count read is checked, not believed
//!
//! The file sits in the user's cache folder, which Pinloom does not own: any program the person
//! runs can write there, and a folder synced or copied from elsewhere brings its files along. A
//! forged count would be believed without a vocabulary to check it against (a count of 0 lets a
//! plan overflow the context window; 4,294,967,295 makes every plan cut everything).
//!
//! Signing the file would not keep such a writer out, so it is not signed. A key kept on this
//! machine is readable by every program running as the person (in this folder or any other they
//! can read, and the same holds for the operating system's key store), which are exactly the
//! programs that can write this folder; and a key that travelled with a synced or copied folder
//! would sign its forgeries too. So the file is read as untrusted input instead, and what is
//! believed is bounded by what is checkable without the vocabulary:
//!
//! - the file must be a regular file at the path itself (no link, FIFO or device), no larger
//!   than [`KEEP`] entries make it, whole and of this format (`crate::framing`);
//! - each entry records its text's length in bytes beside the count, and the count must be
//!   possible for that length: at least one token, at most one token per byte (a byte-level
//!   encoding never has more), and at least one token per 255 bytes (no token of quicktok's
//!   vocabularies is longer). One impossible entry refuses the whole file, which is then ignored
//!   and written anew at the next count remembered;
//! - a count is returned only for a text of the length recorded with it.
//!
//! So a forged file can at worst make a remembered text count anything between its length in
//! bytes divided by 255 and its length in bytes, for the few fixed texts remembered (a
//! truncation marker's words), never 0 for a text nor more tokens than bytes.
//!
//! [`Encoding::count_around_number`]: crate::Encoding::count_around_number

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::framing::{frame, unframe};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"PLQTCNT3";
/// The most counts kept: the oldest goes first. A plan remembers a handful of texts; this bounds
/// the file (24 KB) whatever asks.
pub(crate) const KEEP: usize = 1024;
/// One entry: a fingerprint, the text's length in bytes and its count.
const ENTRY: usize = 16 + 4 + 4;
/// The largest file: its magic, its number of entries, [`KEEP`] entries and its checksum.
const LARGEST: usize = MAGIC.len() + 4 + KEEP * ENTRY + 8;
/// The longest token of any vocabulary quicktok loads, in bytes (its loader refuses longer).
const LONGEST_TOKEN: u32 = 255;

/// Whether `count` tokens is a possible count for a text of `length` bytes: at least one, at most
/// one a byte, and no fewer than its length allows with the longest token.
///
/// Qwen counts its text after NFC normalisation, which can lengthen it, so a true Qwen count can
/// in principle exceed the bound; such a count is then not remembered (it is counted each time),
/// never refused in a file this program wrote.
fn plausible(length: u32, count: u32) -> bool {
    length > 0 && count >= length.div_ceil(LONGEST_TOKEN) && count <= length
}

/// A remembered count and the length of the text it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kept {
    length: u32,
    count: u32,
}

/// The counts remembered for one encoding, oldest first.
#[derive(Debug)]
pub(crate) struct Remembered {
    file: Option<PathBuf>,
    order: Vec<u128>,
    counts: HashMap<u128, Kept>,
}

impl Remembered {
    /// The counts in `file`, or none when it is missing, damaged, not a regular file or holds an
    /// impossible count (see the module's notes); `None` keeps them in this process only.
    pub(crate) fn open(file: Option<PathBuf>) -> Remembered {
        let mut remembered = Remembered { file, order: Vec::new(), counts: HashMap::new() };
        let read = remembered
            .file
            .as_deref()
            .and_then(|file| crate::snapshots::read_regular(file, LARGEST as u64));
        for (fingerprint, kept) in read.as_deref().and_then(decode).unwrap_or_default() {
            if remembered.counts.insert(fingerprint, kept).is_none() {
                remembered.order.push(fingerprint);
            }
        }
        remembered
    }

    /// The count of `text` remembered, if it was (for a text of the length recorded with it).
    pub(crate) fn get(&self, text: &str) -> Option<usize> {
        let kept = self.counts.get(&fingerprint(text))?;
        (kept.length as usize == text.len()).then_some(kept.count as usize)
    }

    /// Remembers that `text` counts `count`, and saves the file when that is new. A count the
    /// file could not hold as possible (see [`plausible`]) is not remembered.
    pub(crate) fn remember(&mut self, text: &str, count: usize) {
        let (Ok(length), Ok(count)) = (u32::try_from(text.len()), u32::try_from(count)) else {
            return;
        };
        if !plausible(length, count) {
            return;
        }
        let fingerprint = fingerprint(text);
        let kept = Kept { length, count };
        if self.counts.insert(fingerprint, kept) == Some(kept) {
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
        let mut bytes = Vec::with_capacity(4 + self.order.len() * ENTRY);
        bytes.extend_from_slice(&(self.order.len() as u32).to_le_bytes());
        for fingerprint in &self.order {
            let kept = self.counts[fingerprint];
            bytes.extend_from_slice(&fingerprint.to_le_bytes());
            bytes.extend_from_slice(&kept.length.to_le_bytes());
            bytes.extend_from_slice(&kept.count.to_le_bytes());
        }
        frame(MAGIC, &bytes)
    }
}

/// The file of `encoding`'s remembered counts in `folder`, for this build.
pub(crate) fn file(folder: &Path, encoding: &str) -> PathBuf {
    folder.join(format!("{encoding}-{}.counts", env!("PINLOOM_QUICKTOK_SNAPSHOT_KEY")))
}

/// The entries of a file [`Remembered::encode`] wrote, or `None` if it is not one whole, holds
/// more than [`KEEP`] entries, or any count impossible for its text's length.
fn decode(bytes: &[u8]) -> Option<Vec<(u128, Kept)>> {
    let body = unframe(MAGIC, bytes)?;
    let count = u32::from_le_bytes(body.get(..4)?.try_into().ok()?) as usize;
    let entries = body.get(4..)?;
    if count > KEEP || entries.len() != count.checked_mul(ENTRY)? {
        return None;
    }
    entries
        .chunks_exact(ENTRY)
        .map(|entry| {
            let word =
                |at: usize| Some(u32::from_le_bytes(entry.get(at..at + 4)?.try_into().ok()?));
            let fingerprint = u128::from_le_bytes(entry.get(..16)?.try_into().ok()?);
            let kept = Kept { length: word(16)?, count: word(20)? };
            plausible(kept.length, kept.count).then_some((fingerprint, kept))
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

#[cfg(test)]
mod tests {
    use super::{ENTRY, KEEP, LARGEST, MAGIC, Remembered, fingerprint};

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
        // "text n" is six bytes or more: any count from 1 to 5 is possible for it.
        let count = |n: usize| 1 + n % 5;
        for n in 0..=KEEP {
            remembered.remember(&format!("text {n}"), count(n));
        }
        assert_eq!(remembered.len(), KEEP);
        assert_eq!(remembered.get("text 0"), None, "the oldest went");
        assert_eq!(remembered.get(&format!("text {KEEP}")), Some(count(KEEP)));
        let read = Remembered::open(Some(file.clone()));
        assert_eq!((read.len(), read.get("text 1")), (KEEP, Some(count(1))));
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

    /// A counts file as a program other than Pinloom could write it: the format and checksum
    /// (anyone can compute it) right, and each entry's fingerprint, recorded length and count
    /// chosen by the writer.
    fn forged(entries: &[(&str, u32, u32)]) -> Vec<u8> {
        let mut bytes = (entries.len() as u32).to_le_bytes().to_vec();
        for (text, length, count) in entries {
            bytes.extend_from_slice(&fingerprint(text).to_le_bytes());
            bytes.extend_from_slice(&length.to_le_bytes());
            bytes.extend_from_slice(&count.to_le_bytes());
        }
        crate::framing::frame(MAGIC, &bytes)
    }

    const BEFORE: &str = "[… ";
    const AFTER: &str = " earlier messages omitted to fit the context window …]";

    #[test]
    fn a_forged_count_is_refused_and_the_file_written_anew() {
        let file = scratch_file("forged");
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("made");
        let length = |text: &str| text.len() as u32;
        // The file as this program writes it is believed (the forger's format is right).
        std::fs::write(&file, forged(&[(BEFORE, length(BEFORE), 2)])).expect("writes");
        assert_eq!(Remembered::open(Some(file.clone())).get(BEFORE), Some(2), "well formed");
        for (what, entries) in [
            ("a count of 0", vec![(BEFORE, length(BEFORE), 0)]),
            ("a count of 4294967295", vec![(AFTER, length(AFTER), u32::MAX)]),
            (
                "0 and 4294967295 together",
                vec![(BEFORE, length(BEFORE), 0), (AFTER, length(AFTER), u32::MAX)],
            ),
            ("more tokens than bytes", vec![(AFTER, length(AFTER), length(AFTER) + 1)]),
            ("a length that makes 4294967295 possible", vec![(AFTER, u32::MAX, u32::MAX)]),
            ("fewer tokens than the longest token allows", vec![(AFTER, 1000, 3)]),
            (
                "a plausible count beside a forged one",
                vec![(BEFORE, length(BEFORE), 2), (AFTER, length(AFTER), 0)],
            ),
        ] {
            std::fs::write(&file, forged(&entries)).expect("writes");
            let mut read = Remembered::open(Some(file.clone()));
            assert_eq!((read.get(BEFORE), read.get(AFTER)), (None, None), "{what}: refused");
            // Ignored and written anew: the next count remembered replaces the file.
            read.remember(AFTER, 11);
            let next = Remembered::open(Some(file.clone()));
            assert_eq!((next.get(BEFORE), next.get(AFTER)), (None, Some(11)), "{what}: rewritten");
        }
        // A count recorded for another length is not the text's count, and more entries than
        // are ever kept is no file of ours.
        std::fs::write(&file, forged(&[(AFTER, length(AFTER) + 40, 50)])).expect("writes");
        assert_eq!(Remembered::open(Some(file.clone())).get(AFTER), None, "another length");
        let many: Vec<String> = (0..=KEEP).map(|n| format!("text {n}")).collect();
        let entries: Vec<(&str, u32, u32)> =
            many.iter().map(|text| (text.as_str(), length(text), 1)).collect();
        std::fs::write(&file, forged(&entries)).expect("writes");
        assert_eq!(Remembered::open(Some(file.clone())).len(), 0, "more than KEEP entries");
        let _ = std::fs::remove_dir_all(file.parent().expect("a folder"));
    }

    #[test]
    fn an_impossible_count_is_not_remembered() {
        let mut remembered = Remembered::open(None);
        remembered.remember("one", 0);
        remembered.remember("one", 4);
        remembered.remember("", 1);
        assert_eq!((remembered.len(), remembered.get("one")), (0, None));
    }

    #[test]
    fn the_largest_file_is_the_one_keep_entries_make() {
        assert_eq!(LARGEST, MAGIC.len() + 4 + KEEP * ENTRY + 8);
        let file = scratch_file("largest");
        let mut remembered = Remembered::open(Some(file.clone()));
        for n in 0..KEEP {
            remembered.remember(&format!("text {n}"), 1);
        }
        assert_eq!(std::fs::metadata(&file).expect("saved").len(), LARGEST as u64);
        assert_eq!(Remembered::open(Some(file.clone())).len(), KEEP, "read back whole");
        // One byte more than that is not read.
        let mut bytes = std::fs::read(&file).expect("reads");
        bytes.push(0);
        std::fs::write(&file, &bytes).expect("writes");
        assert_eq!(Remembered::open(Some(file.clone())).len(), 0, "too large");
        let _ = std::fs::remove_dir_all(file.parent().expect("a folder"));
    }

    /// Runs `open` on another thread and fails, rather than hangs, if it does not return soon.
    #[cfg(unix)]
    fn opened_without_hanging(file: &std::path::Path) -> Remembered {
        let file = file.to_owned();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(Remembered::open(Some(file))));
        receiver
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("opening returns without waiting for a writer")
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_link_in_place_of_the_file_is_refused() {
        let file = scratch_file("special");
        let folder = file.parent().expect("a folder").to_owned();
        std::fs::create_dir_all(&folder).expect("made");
        // A FIFO: opening it for reading would wait for a writer that never comes.
        let made = std::process::Command::new("mkfifo").arg(&file).status().expect("mkfifo runs");
        assert!(made.success(), "mkfifo made the FIFO");
        let mut read = opened_without_hanging(&file);
        assert_eq!(read.len(), 0, "a FIFO is not read");
        read.remember(AFTER, 11);
        assert!(std::fs::symlink_metadata(&file).expect("there").file_type().is_file());
        assert_eq!(Remembered::open(Some(file.clone())).get(AFTER), Some(11), "replaced");
        // A link, even to a well-formed counts file, is not followed.
        let elsewhere = folder.join("elsewhere.counts");
        std::fs::rename(&file, &elsewhere).expect("moved");
        std::os::unix::fs::symlink(&elsewhere, &file).expect("linked");
        let mut read = opened_without_hanging(&file);
        assert_eq!(read.get(AFTER), None, "a link is not followed");
        read.remember(BEFORE, 2);
        assert!(std::fs::symlink_metadata(&file).expect("there").file_type().is_file());
        assert_eq!(
            Remembered::open(Some(elsewhere.clone())).get(BEFORE),
            None,
            "not written through"
        );
        // A link to something that is no file at all, such as a device, likewise.
        std::fs::remove_file(&file).expect("removed");
        std::os::unix::fs::symlink("/dev/zero", &file).expect("linked");
        assert_eq!(opened_without_hanging(&file).len(), 0, "a link to a device");
        let _ = std::fs::remove_dir_all(&folder);
    }
}
