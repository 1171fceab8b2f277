//! Exact token counts for OpenAI's o200k and cl100k encodings and for the open Llama 3 and Qwen
//! (2, 2.5, 3) models, through quicktok-v1, a C++ byte-pair encoder whose output equals the
//! reference tokenizers' (tiktoken for OpenAI's; checked here against tiktoken-rs, see the tests).
//!
//! Chosen over bpe-openai after measuring both in one run on this machine class: about 3× on prose
//! and 4.5× on code for o200k, with equal counts on every text tried; the figures and the trade (a
//! slower first load) are in `crates/pinloom-engine/benches/README.md` (W2).
//!
//! The vocabularies are built into the program; each encoding is loaded the first time it counts
//! (0.1–0.4 s, 34–50 MB) and kept for the life of the process. [`Encoding::load`] loads one ahead
//! of time, so a front end can do it while the person is still reading.

use std::sync::OnceLock;

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

    /// Loads the vocabulary now rather than at the first count.
    pub fn load(self) -> Result<(), LoadError> {
        self.loaded().as_ref().map(|_| ()).map_err(LoadError::clone)
    }

    fn loaded(self) -> &'static Result<foreign::Tokenizer, LoadError> {
        static LOADED: [OnceLock<Result<foreign::Tokenizer, LoadError>>; 4] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let slot = Encoding::ALL.iter().position(|encoding| *encoding == self).unwrap_or(0);
        LOADED[slot].get_or_init(|| {
            foreign::Tokenizer::load(self.quicktok_name(), self.files())
                .map_err(|reason| LoadError { encoding: self, reason })
        })
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
    struct QtTokenizer {
        _opaque: [u8; 0],
    }

    /// One embedded file, as `cpp/embedded_files.cpp` reads it.
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
        ) -> *mut QtTokenizer;
        fn qt_count(tokenizer: *const QtTokenizer, text: *const c_char, length: usize) -> usize;
    }

    /// A loaded quicktok tokenizer; never freed, as it lives as long as the process.
    pub(super) struct Tokenizer(*const QtTokenizer);

    // SAFETY: quicktok documents a loaded tokenizer as safe to use from many threads at once
    // (`quicktok.h`: "All functions are thread-safe on a loaded handle"); it is never mutated or
    // freed after loading.
    unsafe impl Send for Tokenizer {}
    // SAFETY: as for `Send`: counting only reads the loaded tables.
    unsafe impl Sync for Tokenizer {}

    impl Tokenizer {
        pub(super) fn load(
            encoding: &str,
            files: &'static [(&'static str, &'static [u8])],
        ) -> Result<Tokenizer, String> {
            let names: Vec<CString> = files
                .iter()
                .map(|(name, _)| CString::new(*name).map_err(|error| error.to_string()))
                .collect::<Result<_, _>>()?;
            let table: Vec<File> = names
                .iter()
                .zip(files)
                .map(|(name, (_, bytes))| File {
                    name: name.as_ptr(),
                    bytes: bytes.as_ptr(),
                    length: bytes.len(),
                })
                .collect();
            let encoding = CString::new(encoding).map_err(|error| error.to_string())?;
            let mut error = vec![0 as c_char; 512];
            // SAFETY: every pointer is valid for the call: `encoding` and `names` are
            // NUL-terminated and outlive it, `table` holds `table.len()` entries whose bytes are
            // 'static, and `error` is writable for its length. The loader copies what it keeps.
            let loaded = unsafe {
                pinloom_quicktok_load(
                    encoding.as_ptr(),
                    table.as_ptr(),
                    table.len(),
                    error.as_mut_ptr(),
                    error.len(),
                )
            };
            if loaded.is_null() {
                let bytes: Vec<u8> =
                    error.iter().take_while(|c| **c != 0).map(|c| c.to_ne_bytes()[0]).collect();
                return Err(String::from_utf8_lossy(&bytes).into_owned());
            }
            Ok(Tokenizer(loaded))
        }

        /// The count, or `None` when quicktok reports an error (it returns `SIZE_MAX`).
        pub(super) fn count(&self, text: &str) -> Option<usize> {
            // SAFETY: the handle is a loaded tokenizer that is never freed; `text` is valid for
            // `text.len()` bytes (quicktok takes a length and needs no terminator).
            let tokens = unsafe { qt_count(self.0, text.as_ptr().cast(), text.len()) };
            (tokens != usize::MAX).then_some(tokens)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Encoding;

    #[test]
    fn every_encoding_loads_from_the_built_in_data() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.load(), Ok(()), "{encoding:?}");
            assert!(encoding.count("Rivers meander across their floodplains.") > 3);
        }
    }

    #[test]
    fn empty_text_counts_nothing() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.count(""), 0, "{encoding:?}");
        }
    }
}
