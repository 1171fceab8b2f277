//! Exact token counts for OpenAI's o200k and cl100k encodings and for the open Llama 3 and Qwen
//! (2, 2.5, 3) models, through quicktok-v1, a C++ byte-pair encoder whose output equals the
//! reference tokenizers' (tiktoken for OpenAI's; checked here against tiktoken-rs, see the tests).
//!
//! Chosen over bpe-openai after measuring both in one run on this machine class: about 3× on prose
//! and 4.5× on code for o200k, with equal counts on every text tried; the figures and the trade (a
//! slower first load) are in `crates/pinloom-engine/benches/README.md` (W2).
//!
//! The vocabularies are built into the program; each encoding is loaded the first time it counts
//! and kept for the life of the process. Built from its vocabulary it takes 0.1–0.7 s; its tables
//! are then saved as a snapshot in the user's cache folder, which later processes read and check
//! entry by entry in 25–56 ms (see `snapshots` and the crate's README). [`Encoding::load`] loads
//! one ahead of time, so a front end can do it while the person is still reading.

use std::sync::{Mutex, OnceLock, PoisonError};

mod cache_folder;
mod framing;
mod remembered;
#[cfg(test)]
mod snapshot_checks;
mod snapshots;

/// An encoding quicktok counts exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// OpenAI's o200k_base (GPT-4o and later; GPT-OSS's harmony encoding counts ordinary text the
    /// same, since only its special tokens differ).
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// Meta's Llama 3 (3, 3.1, 3.2, 3.3).
    Llama3,
    /// Qwen 2, 2.5 and 3, which share one vocabulary; text is NFC-normalised first, as Qwen's own
    /// tokenizer does.
    Qwen,
}

/// A vocabulary that would not load: only possible if the built-in data were damaged, which the
/// build's checksum rules out, so it is reported rather than expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the built-in {encoding:?} vocabulary did not load: {reason}")]
pub struct LoadError {
    /// The encoding that failed.
    pub encoding: Encoding,
    /// quicktok's own words.
    pub reason: String,
}

impl Encoding {
    /// Every encoding.
    pub const ALL: [Encoding; 4] =
        [Encoding::O200k, Encoding::Cl100k, Encoding::Llama3, Encoding::Qwen];

    /// Counts the tokens of `text` as ordinary text: a special token's spelling (say
    /// `<|endoftext|>`) is counted as the characters it is made of, as tiktoken's
    /// `encode_ordinary` does, because text in a conversation cannot smuggle control tokens in.
    ///
    /// Never fails: if the vocabulary could not load (see [`LoadError`]) or quicktok reports an
    /// error, the count is the text's length in bytes, which no byte-level encoding exceeds, so a
    /// budget planned with it can only be cautious.
    pub fn count(self, text: &str) -> usize {
        match self.loaded() {
            Ok(tokenizer) => tokenizer.count(text).unwrap_or(text.len()),
            Err(_) => text.len(),
        }
    }

    /// Counts `text` as [`count`](Encoding::count) does, and remembers the count on this
    /// machine (beside the snapshots, see `remembered`), so that a later process answers it
    /// without loading the vocabulary: for the few fixed texts a plan counts that no store keeps
    /// a count of, such as a truncation marker's words.
    pub fn count_remembered(self, text: &str) -> usize {
        self.count_remembered_in(self.remembered(), text)
    }

    fn count_remembered_in(self, remembered: &Mutex<remembered::Remembered>, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        if let Some(count) = remembered.lock().unwrap_or_else(PoisonError::into_inner).get(text) {
            return count;
        }
        let count = self.count(text);
        // Counted without the vocabulary (it failed to load), the count is a cautious stand-in:
        // not one to remember.
        if self.loaded().is_ok() {
            remembered.lock().unwrap_or_else(PoisonError::into_inner).remember(text, count);
        }
        count
    }

    /// Counts `before`, `number` in decimal and `after` written together, as
    /// [`count`](Encoding::count) would (a truncation marker: "[… 8794 earlier messages omitted
    /// …]"), from the remembered counts of the words around the number when it splits off.
    ///
    /// Every encoding here cuts text into pieces by a pattern before merging bytes, and never
    /// merges across pieces. A run of digits is always cut into its own pieces (of up to three
    /// digits for o200k, cl100k and Llama 3, of one for Qwen), each a single token. So unless
    /// something at its edges could join the number's pieces (text before it ending in a digit
    /// or in two spaces, text after it starting with a digit or a character outside ASCII other
    /// than a space), the whole counts what its three parts count apart. Otherwise it is
    /// counted whole. `count_around_number_equals_the_whole_count` checks it on random text.
    pub fn count_around_number(self, before: &str, number: u64, after: &str) -> usize {
        self.count_around_number_in(self.remembered(), before, number, after)
    }

    fn count_around_number_in(
        self,
        remembered: &Mutex<remembered::Remembered>,
        before: &str,
        number: u64,
        after: &str,
    ) -> usize {
        let digits = number.to_string();
        if !number_splits_off(before, after) {
            return self.count(&format!("{before}{digits}{after}"));
        }
        self.count_remembered_in(remembered, before)
            + digits.len().div_ceil(self.digits_per_piece())
            + self.count_remembered_in(remembered, after)
    }

    /// How many digits the encoding's pattern puts in one piece (each such piece of digits is
    /// one token; `every_piece_of_digits_is_one_token` checks all of them).
    fn digits_per_piece(self) -> usize {
        match self {
            Encoding::O200k | Encoding::Cl100k | Encoding::Llama3 => 3,
            Encoding::Qwen => 1,
        }
    }

    fn remembered(self) -> &'static Mutex<remembered::Remembered> {
        static REMEMBERED: [OnceLock<Mutex<remembered::Remembered>>; 4] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let slot = Encoding::ALL.iter().position(|encoding| *encoding == self).unwrap_or(0);
        REMEMBERED[slot].get_or_init(|| {
            let file =
                snapshots::folder().map(|folder| remembered::file(&folder, self.quicktok_name()));
            Mutex::new(remembered::Remembered::open(file))
        })
    }

    /// Loads the vocabulary now rather than at the first count.
    pub fn load(self) -> Result<(), LoadError> {
        self.loaded().as_ref().map(|_| ()).map_err(LoadError::clone)
    }

    fn loaded(self) -> &'static Result<foreign::Tokenizer, LoadError> {
        static LOADED: [OnceLock<Result<foreign::Tokenizer, LoadError>>; 4] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let slot = Encoding::ALL.iter().position(|encoding| *encoding == self).unwrap_or(0);
        LOADED[slot].get_or_init(|| {
            self.load_through(snapshots::folder().as_deref()).map(|(tokenizer, _)| tokenizer)
        })
    }

    /// Loads the encoding from its snapshot in `folder` when there is a good one; otherwise
    /// builds its tables from the vocabulary and saves a snapshot there for the next process
    /// (a snapshot that cannot be written costs only the next process's time).
    fn load_through(
        self,
        folder: Option<&std::path::Path>,
    ) -> Result<(foreign::Tokenizer, LoadedFrom), LoadError> {
        let file = folder.map(|folder| snapshots::file(folder, self.quicktok_name()));
        if let Some(snapshot) = file.as_deref().and_then(snapshots::read)
            && let Some(tables) = framing::unframe(snapshots::MAGIC, &snapshot)
        {
            // A damaged or foreign file is refused by its framing; a crafted one by the C side,
            // which checks every table against the vocabulary before using any. Either is built
            // again below, and its file replaced.
            if let Ok(tokenizer) =
                foreign::Tokenizer::restore(self.quicktok_name(), self.files(), tables)
            {
                return Ok((tokenizer, LoadedFrom::Snapshot));
            }
        }
        let tokenizer = foreign::Tokenizer::load(self.quicktok_name(), self.files())
            .map_err(|reason| LoadError { encoding: self, reason })?;
        if let (Some(file), Some(tables)) = (file, tokenizer.save()) {
            snapshots::write(&file, &framing::frame(snapshots::MAGIC, &tables));
        }
        Ok((tokenizer, LoadedFrom::Vocabulary))
    }

    /// The name quicktok loads the encoding by.
    fn quicktok_name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k_base",
            Encoding::Cl100k => "cl100k_base",
            Encoding::Llama3 => "llama3",
            Encoding::Qwen => "qwen3",
        }
    }

    /// The files quicktok reads for the encoding (its special-token lists are left out: counts
    /// are of ordinary text).
    fn files(self) -> &'static [(&'static str, &'static [u8])] {
        match self {
            Encoding::O200k => {
                &[("o200k.vocab", data::O200K_VOCAB), ("uniclass_o200k.bin", data::UNICLASS_O200K)]
            }
            Encoding::Cl100k => {
                &[("cl100k.vocab", data::CL100K_VOCAB), ("uniclass.bin", data::UNICLASS)]
            }
            Encoding::Llama3 => {
                &[("llama3.vocab", data::LLAMA3_VOCAB), ("uniclass.bin", data::UNICLASS)]
            }
            Encoding::Qwen => &[
                ("qwen3.vocab", data::QWEN_VOCAB),
                ("uniclass.bin", data::UNICLASS),
                ("nfc.bin", data::NFC),
            ],
        }
    }
}

/// Whether a number written between `before` and `after` is cut into pieces of its own by every
/// encoding's pattern, the same pieces as alone: nothing before it that a piece of digits or of
/// spaces would take in (a digit, or two spaces: a run of spaces gives its last to what follows),
/// and nothing after it that could be read with it (a digit; a non-ASCII character other than
/// whitespace, which might be a combining mark).
fn number_splits_off(before: &str, after: &str) -> bool {
    let mut end = before.chars().rev();
    let before_ends_cleanly = match (end.next(), end.next()) {
        (None, _) => true,
        (Some(last), previous) => {
            let ends_in_spaces = last.is_whitespace() && previous.is_none_or(char::is_whitespace);
            !last.is_numeric() && !ends_in_spaces
        }
    };
    let after_starts_cleanly = after
        .chars()
        .next()
        .is_none_or(|first| first.is_whitespace() || (first.is_ascii() && !first.is_ascii_digit()));
    before_ends_cleanly && after_starts_cleanly
}

/// Where a loaded encoding's tables came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadedFrom {
    /// Read back from a snapshot an earlier process saved.
    Snapshot,
    /// Built from the vocabulary.
    Vocabulary,
}

/// The vocabularies and Unicode tables of quicktok's release, as unpacked by build.rs (which
/// checks the whole archive's SHA-256).
mod data {
    macro_rules! release_file {
        ($name:literal) => {
            include_bytes!(concat!(env!("PINLOOM_QUICKTOK_DATA"), "/", $name))
        };
    }
    pub(super) const O200K_VOCAB: &[u8] = release_file!("o200k.vocab");
    pub(super) const CL100K_VOCAB: &[u8] = release_file!("cl100k.vocab");
    pub(super) const LLAMA3_VOCAB: &[u8] = release_file!("llama3.vocab");
    pub(super) const QWEN_VOCAB: &[u8] = release_file!("qwen3.vocab");
    pub(super) const UNICLASS: &[u8] = release_file!("uniclass.bin");
    pub(super) const UNICLASS_O200K: &[u8] = release_file!("uniclass_o200k.bin");
    pub(super) const NFC: &[u8] = release_file!("nfc.bin");
}

/// The calls into C. Everything unsafe in Pinloom is in this module.
#[allow(unsafe_code)]
mod foreign {
    use std::ffi::{CString, c_char};

    #[repr(C)]
    struct PinloomTokenizer {
        _opaque: [u8; 0],
    }

    /// One embedded file: `struct pinloom_quicktok_file` of `cpp/pinloom_quicktok.h`, where the
    /// functions below are declared for the C++ side.
    #[repr(C)]
    struct File {
        name: *const c_char,
        bytes: *const u8,
        length: usize,
    }

    unsafe extern "C" {
        fn pinloom_quicktok_load(
            encoding: *const c_char,
            files: *const File,
            count: usize,
            error: *mut c_char,
            error_length: usize,
        ) -> *mut PinloomTokenizer;
        fn pinloom_quicktok_restore(
            encoding: *const c_char,
            files: *const File,
            count: usize,
            bytes: *const u8,
            length: usize,
            error: *mut c_char,
            error_length: usize,
        ) -> *mut PinloomTokenizer;
        fn pinloom_quicktok_save(
            tokenizer: *const PinloomTokenizer,
            bytes: *mut *mut u8,
            length: *mut usize,
        ) -> i32;
        fn pinloom_quicktok_free_bytes(bytes: *mut u8);
        fn pinloom_quicktok_count(
            tokenizer: *const PinloomTokenizer,
            text: *const c_char,
            length: usize,
        ) -> usize;
    }

    /// A loaded quicktok tokenizer; never freed, as it lives as long as the process.
    pub(super) struct Tokenizer(*const PinloomTokenizer);

    // SAFETY: quicktok documents a loaded tokenizer as safe to use from many threads at once
    // (`quicktok.h`: "All functions are thread-safe on a loaded handle"); it is never mutated or
    // freed after loading.
    unsafe impl Send for Tokenizer {}
    // SAFETY: as for `Send`: counting only reads the loaded tables.
    unsafe impl Sync for Tokenizer {}

    /// The files of one encoding as the C side reads them; the names live as long as the table.
    struct FileTable {
        _names: Vec<CString>,
        table: Vec<File>,
    }

    fn file_table(files: &'static [(&'static str, &'static [u8])]) -> Result<FileTable, String> {
        let names: Vec<CString> = files
            .iter()
            .map(|(name, _)| CString::new(*name).map_err(|error| error.to_string()))
            .collect::<Result<_, _>>()?;
        let table = names
            .iter()
            .zip(files)
            .map(|(name, (_, bytes))| File {
                name: name.as_ptr(),
                bytes: bytes.as_ptr(),
                length: bytes.len(),
            })
            .collect();
        Ok(FileTable { _names: names, table })
    }

    /// quicktok's message from its error buffer.
    fn message(error: &[c_char]) -> String {
        let bytes: Vec<u8> =
            error.iter().take_while(|c| **c != 0).map(|c| c.to_ne_bytes()[0]).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    impl Tokenizer {
        /// Builds the encoding's tables from its vocabulary (the slow way).
        pub(super) fn load(
            encoding: &str,
            files: &'static [(&'static str, &'static [u8])],
        ) -> Result<Tokenizer, String> {
            let files = file_table(files)?;
            let encoding = CString::new(encoding).map_err(|error| error.to_string())?;
            let mut error = vec![0 as c_char; 512];
            // SAFETY: every pointer is valid for the call: `encoding` and the table's names are
            // NUL-terminated and outlive it, the table holds `table.len()` entries whose bytes
            // are 'static, and `error` is writable for its length. The loader copies what it
            // keeps.
            let loaded = unsafe {
                pinloom_quicktok_load(
                    encoding.as_ptr(),
                    files.table.as_ptr(),
                    files.table.len(),
                    error.as_mut_ptr(),
                    error.len(),
                )
            };
            if loaded.is_null() { Err(message(&error)) } else { Ok(Tokenizer(loaded)) }
        }

        /// The encoding with the tables [`Tokenizer::save`] gave (a snapshot's body); the C side
        /// checks their layout, then every table entry by entry against the vocabulary
        /// (`check_tables`), before using any, and refuses a crafted one with the reason.
        pub(super) fn restore(
            encoding: &str,
            files: &'static [(&'static str, &'static [u8])],
            snapshot: &[u8],
        ) -> Result<Tokenizer, String> {
            let files = file_table(files)?;
            let encoding = CString::new(encoding).map_err(|error| error.to_string())?;
            let mut error = vec![0 as c_char; 512];
            // SAFETY: as for `load`, and `snapshot` is valid for `snapshot.len()` bytes; the
            // restore copies what it keeps.
            let restored = unsafe {
                pinloom_quicktok_restore(
                    encoding.as_ptr(),
                    files.table.as_ptr(),
                    files.table.len(),
                    snapshot.as_ptr(),
                    snapshot.len(),
                    error.as_mut_ptr(),
                    error.len(),
                )
            };
            if restored.is_null() { Err(message(&error)) } else { Ok(Tokenizer(restored)) }
        }

        /// The loaded tables as a snapshot's body, or `None` if quicktok could not write them.
        pub(super) fn save(&self) -> Option<Vec<u8>> {
            let mut bytes: *mut u8 = std::ptr::null_mut();
            let mut length = 0usize;
            // SAFETY: the handle is a loaded tokenizer; `bytes` and `length` are written only on
            // success (status 0), when `bytes` points to `length` bytes from malloc.
            let status = unsafe { pinloom_quicktok_save(self.0, &raw mut bytes, &raw mut length) };
            if status != 0 || bytes.is_null() {
                return None;
            }
            // SAFETY: on success `bytes` holds `length` initialised bytes; they are copied
            // before the buffer is freed, once, with the C side's own free.
            let copy = unsafe { std::slice::from_raw_parts(bytes, length) }.to_vec();
            // SAFETY: as above.
            unsafe { pinloom_quicktok_free_bytes(bytes) };
            Some(copy)
        }

        /// The count, or `None` when quicktok reports an error (it returns `SIZE_MAX`).
        pub(super) fn count(&self, text: &str) -> Option<usize> {
            // SAFETY: the handle is a loaded tokenizer that is never freed; `text` is valid for
            // `text.len()` bytes (quicktok takes a length and needs no terminator).
            let tokens =
                unsafe { pinloom_quicktok_count(self.0, text.as_ptr().cast(), text.len()) };
            (tokens != usize::MAX).then_some(tokens)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::remembered::Remembered;
    use super::{Encoding, LoadedFrom, foreign, number_splits_off, snapshots};

    #[test]
    fn every_encoding_loads_from_the_built_in_data() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.load(), Ok(()), "{encoding:?}");
            assert!(encoding.count("Rivers meander across their floodplains.") > 3);
        }
    }

    /// Text that exercises every table: prose, code, CJK, emoji, whitespace runs, digits,
    /// combining marks (Qwen normalises them), and bytes of every UTF-8 length.
    pub(super) const MIXED: &str = "Rivers meander across their floodplains, don't they? \n\n\
        fn main() {\n    let x: Vec<u8> = vec![1, 2, 3]; // 12345678\n}\n\
        \u{6cb3}\u{6d41}\u{5728}\u{5e73}\u{539f}\u{4e0a}\u{873f}\u{8712}\u{3002} \
        \u{1f30a}\u{1f3de}\u{fe0f} e\u{301}te\u{301} \t\t   \u{a0}  \u{0627}\u{0644}\u{0646}\u{0647}\u{0631} \
        ALLCAPS mixedCase snake_case 3.14159 <|endoftext|>";

    fn scratch_folder(name: &str) -> std::path::PathBuf {
        let folder = std::env::temp_dir()
            .join(format!("pinloom-tokenizer-snapshots-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        folder
    }

    #[test]
    fn a_snapshot_is_written_once_then_read_and_counts_the_same() {
        let folder = scratch_folder("roundtrip");
        for encoding in Encoding::ALL {
            let (built, from) = encoding.load_through(Some(&folder)).expect("loads");
            assert_eq!(from, LoadedFrom::Vocabulary, "{encoding:?}: no snapshot yet");
            let file = snapshots::file(&folder, encoding.quicktok_name());
            assert!(file.is_file(), "{encoding:?}: the first load saves a snapshot");
            let (restored, from) = encoding.load_through(Some(&folder)).expect("loads");
            assert_eq!(from, LoadedFrom::Snapshot, "{encoding:?}: the second load reads it");
            for end in (0..=MIXED.len()).filter(|end| MIXED.is_char_boundary(*end)) {
                let text = &MIXED[..end];
                assert_eq!(restored.count(text), built.count(text), "{encoding:?}: {text:?}");
            }
            assert_eq!(restored.count(MIXED), Some(encoding.count(MIXED)), "{encoding:?}");
        }
        let _ = std::fs::remove_dir_all(&folder);
    }

    #[test]
    fn a_damaged_snapshot_is_refused_and_built_again() {
        let folder = scratch_folder("damaged");
        let encoding = Encoding::Cl100k;
        encoding.load_through(Some(&folder)).expect("loads");
        let file = snapshots::file(&folder, encoding.quicktok_name());
        let good = std::fs::read(&file).expect("a snapshot was saved");
        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 0x40;
        let damaged: [(&str, Vec<u8>); 4] = [
            ("one byte changed", flipped),
            ("cut short", good[..good.len() - 1000].to_vec()),
            ("empty", Vec::new()),
            ("another file", b"PLQTSNP1 and then something else entirely".to_vec()),
        ];
        for (what, bytes) in damaged {
            assert!(
                foreign::Tokenizer::restore(encoding.quicktok_name(), encoding.files(), &bytes)
                    .is_err(),
                "{what}: refused"
            );
            std::fs::write(&file, &bytes).expect("writes");
            let (tokenizer, from) = encoding.load_through(Some(&folder)).expect("still loads");
            assert_eq!(from, LoadedFrom::Vocabulary, "{what}: built from the vocabulary");
            assert_eq!(tokenizer.count(MIXED), Some(encoding.count(MIXED)), "{what}");
            assert_eq!(std::fs::read(&file).expect("rewritten"), good, "{what}: saved anew");
        }
        let _ = std::fs::remove_dir_all(&folder);
    }

    #[test]
    fn without_a_folder_nothing_is_saved() {
        let (_, from) = Encoding::Cl100k.load_through(None).expect("loads");
        assert_eq!(from, LoadedFrom::Vocabulary);
    }

    #[test]
    fn every_piece_of_digits_is_one_token() {
        for encoding in Encoding::ALL {
            let per_piece = encoding.digits_per_piece() as u32;
            for length in 1..=per_piece {
                for n in 0..10_usize.pow(length) {
                    let digits = format!("{n:0width$}", width = length as usize);
                    assert_eq!(encoding.count(&digits), 1, "{encoding:?}: {digits:?}");
                }
            }
            // And a longer number is cut into pieces of that many digits.
            for digits in ["1234", "1000000", "9999999999", "12345678901234567890"] {
                assert_eq!(
                    encoding.count(digits),
                    digits.len().div_ceil(per_piece as usize),
                    "{encoding:?}: {digits}"
                );
            }
        }
    }

    /// Counts of the words around a number for one encoding, kept in this test only (not in the
    /// user's cache).
    fn kept_here() -> Mutex<Remembered> {
        Mutex::new(Remembered::open(None))
    }

    #[test]
    fn the_default_truncation_marker_counts_as_its_words_and_its_number() {
        let (before, after) = ("[… ", " earlier messages omitted to fit the context window …]");
        for encoding in Encoding::ALL {
            // Each encoding remembers its own counts.
            let remembered = kept_here();
            for number in [0, 7, 42, 999, 1000, 8794, 99_999, 123_456_789, u64::MAX] {
                let whole = format!("{before}{number}{after}");
                assert_eq!(
                    encoding.count_around_number_in(&remembered, before, number, after),
                    encoding.count(&whole),
                    "{encoding:?}: {whole}"
                );
            }
        }
        assert!(number_splits_off(before, after), "the default marker is counted in parts");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Whatever surrounds the number (digits, runs of spaces, line breaks, combining marks,
        /// contractions, punctuation), the count is the whole text's.
        #[test]
        fn count_around_number_equals_the_whole_count(
            before in "[ a-zA-Z0-9'.,…\\[\\]{}\n\t\u{301}é\u{a0}]{0,12}",
            number in proptest::prelude::any::<u64>(),
            after in "[ a-zA-Z0-9'.,…\\[\\]{}\n\t\u{301}é\u{a0}]{0,12}",
        ) {
            for encoding in Encoding::ALL {
                let remembered = kept_here();
                let whole = format!("{before}{number}{after}");
                proptest::prop_assert_eq!(
                    encoding.count_around_number_in(&remembered, &before, number, &after),
                    encoding.count(&whole),
                    "{:?}: {:?}", encoding, whole
                );
            }
        }
    }

    #[test]
    fn a_count_is_remembered_only_once_counted_exactly() {
        let remembered = kept_here();
        let text = "Rivers meander.";
        let count = Encoding::Cl100k.count_remembered_in(&remembered, text);
        assert_eq!(count, Encoding::Cl100k.count(text));
        assert_eq!(remembered.lock().expect("not poisoned").get(text), Some(count));
        assert_eq!(Encoding::Cl100k.count_remembered_in(&remembered, ""), 0);
        assert_eq!(remembered.lock().expect("not poisoned").get(""), None, "nothing to count");
    }

    #[test]
    fn empty_text_counts_nothing() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.count(""), 0, "{encoding:?}");
        }
    }
}
