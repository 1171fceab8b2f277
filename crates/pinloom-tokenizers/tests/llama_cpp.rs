//! Pinloom's Llama 3 and Qwen counts against llama.cpp's own tokenizer, on more than a megabyte
//! of mixed text (prose, code, CJK, emoji, whitespace runs, other scripts).
//!
//! llama.cpp's server (llama-cpp-python's) is started with a tiny model that carries the real
//! vocabulary: `tests/llama/tiny_model.py` writes it from the files this crate counts with (the
//! tokens, merges derived from their ranks, and the pre-tokenizer as llama.cpp names it). Its
//! `/extras/tokenize/count` counts each piece of the corpus; the counts must be equal, or the
//! difference one the crate's README explains.
//!
//! Ignored in a plain `cargo test`: `./dev test llama` runs it with `--ignored`.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use pinloom_test_server::llama::{LlamaServer, Vocabulary, write_model};
use pinloom_tokenizers::Encoding;
use unicode_normalization::UnicodeNormalization;

/// A small deterministic generator (xorshift64*), so the corpus is the same on every run.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
    fn char_in(&mut self, low: u32, high: u32) -> char {
        char::from_u32(low + self.below((high - low + 1) as usize) as u32).unwrap()
    }
}

const WORDS: &[&str] = &[
    "river",
    "meanders",
    "across",
    "the",
    "floodplain",
    "because",
    "outer",
    "bank",
    "erodes",
    "while",
    "inner",
    "fills",
    "with",
    "sand",
    "Oxbow",
    "lakes",
    "form",
    "when",
    "a",
    "loop",
    "is",
    "cut",
    "off",
    "Hydrology",
    "sediment",
    "velocity",
    "of",
    "water",
    "THE",
    "Mississippi",
    "don't",
    "it's",
    "they're",
    "we've",
    "you'll",
    "she'd",
    "I'm",
    "naïve",
    "café",
    "façade",
    "Zürich",
    "straße",
    "résumé",
    "coöperate",
    "über",
    "Ångström",
    "piñata",
    "encyclopædia",
    // The same letters decomposed: a base letter and a combining mark.
    "cafe\u{301}",
    "nai\u{308}ve",
    "Zu\u{308}rich",
    "A\u{30a}ngstro\u{308}m",
];
const PUNCTUATION: &[&str] =
    &[".", ",", ";", ":", "!", "?", "…", "—", "–", "\"", "'", "(", ")", "«", "»"];
const CODE: &[&str] = &[
    "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n",
    "def meander(river, *, width=3.5):\n\treturn [b for b in river.banks if b.erodes()]\n",
    "for (int i = 0; i < n; ++i) { total += values[i] * 0x1F; }\n",
    "SELECT id, title FROM trees WHERE updated_at > ?1 ORDER BY id DESC;\n",
    "const answer = await fetch(`${base}/v1/chat`, { method: 'POST' });\n",
    "    if self.count >= LIMIT && !done { return Err(Error::TooMany); }\n",
    "<div class=\"card\"><span>{{ title }}</span></div>\n",
    "x = np.zeros((128, 256), dtype=np.float32)  # 32768 floats\n",
];
const EMOJI: &[&str] = &[
    "😀",
    "🌊",
    "🏞️",
    "🚣‍♀️",
    "👩‍💻",
    "👍🏽",
    "🇫🇷",
    "🇯🇵",
    "❤️",
    "✨",
    "🤖",
    "🧵",
    "👨‍👩‍👧‍👦",
    "🏳️‍🌈",
    "1️⃣",
    "©️",
    "🫠",
];
const WHITESPACE: &[&str] =
    &[" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u{a0}", "\u{3000}"];

fn prose(dice: &mut Dice, out: &mut String) {
    for _ in 0..(20 + dice.below(40)) {
        out.push_str(dice.pick(WORDS));
        match dice.below(12) {
            0 => out.push_str(dice.pick(PUNCTUATION)),
            1 => out.push_str(&dice.below(1_000_000).to_string()),
            2 => out.push_str(&format!("{}.{}", dice.below(100), dice.below(1000))),
            _ => {}
        }
        out.push(' ');
    }
}

fn scripts(dice: &mut Dice, out: &mut String) {
    // Ranges whose code points are all assigned, so both sides' Unicode tables agree.
    let ranges: &[(u32, u32)] = &[
        (0x4E00, 0x9FA5), // CJK ideographs
        (0x3041, 0x3096), // Hiragana
        (0x30A1, 0x30FA), // Katakana
        (0xAC00, 0xD7A3), // Hangul syllables
        (0x0410, 0x044F), // Cyrillic
        (0x03B1, 0x03C9), // Greek
        (0x05D0, 0x05EA), // Hebrew
        (0x0627, 0x064A), // Arabic
        (0x0915, 0x0939), // Devanagari consonants
        (0x0E01, 0x0E2E), // Thai
    ];
    let (low, high) = ranges[dice.below(ranges.len())];
    for _ in 0..(10 + dice.below(60)) {
        out.push(dice.char_in(low, high));
        match dice.below(10) {
            0 => out.push_str(dice.pick(&["。", "，", "、", "「", "」", " ", "!", "?"])),
            1 => out.push(' '),
            2 => out.push_str(dice.pick(WORDS)),
            _ => {}
        }
    }
}

/// One piece of the corpus: a paragraph of one kind, with whitespace runs between its parts.
fn piece(dice: &mut Dice) -> String {
    let mut out = String::new();
    for _ in 0..(1 + dice.below(4)) {
        match dice.below(6) {
            0 | 1 => prose(dice, &mut out),
            2 => out.push_str(dice.pick(CODE)),
            3 => scripts(dice, &mut out),
            4 => {
                for _ in 0..(3 + dice.below(12)) {
                    out.push_str(dice.pick(EMOJI));
                    if dice.below(3) == 0 {
                        out.push_str(dice.pick(WORDS));
                    }
                }
            }
            _ => {
                for _ in 0..(1 + dice.below(8)) {
                    out.push_str(dice.pick(WHITESPACE));
                }
            }
        }
        for _ in 0..dice.below(3) {
            out.push_str(dice.pick(WHITESPACE));
        }
    }
    out
}

fn corpus() -> Vec<String> {
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    let mut pieces = Vec::new();
    let mut bytes = 0;
    while bytes < 1_100_000 {
        let piece = piece(&mut dice);
        bytes += piece.len();
        pieces.push(piece);
    }
    pieces
}

/// What the comparison found: the corpus's size, both sides' totals, and the pieces that differ.
struct Comparison {
    pieces: usize,
    bytes: usize,
    theirs: u64,
    ours: u64,
    differ: Vec<(String, u64, usize)>,
}

/// Counts every piece with the server (given each piece as `prepare` makes it) and with
/// `encoding`.
fn compare(
    vocabulary: Vocabulary,
    encoding: Encoding,
    prepare: impl Fn(&str) -> String,
) -> Comparison {
    let folder = tempfile::tempdir().unwrap();
    let model = folder.path().join("vocabulary.gguf");
    write_model(&model, vocabulary, Some(Path::new(env!("PINLOOM_QUICKTOK_DATA"))));
    let server = LlamaServer::start(&model, 512);
    let mut found = Comparison { pieces: 0, bytes: 0, theirs: 0, ours: 0, differ: Vec::new() };
    for piece in corpus() {
        let (status, answer) =
            server.post("/extras/tokenize/count", &serde_json::json!({ "input": prepare(&piece) }));
        assert_eq!(status, 200, "{answer}");
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        let theirs = answer["count"].as_u64().unwrap();
        let ours = encoding.count(&piece);
        found.pieces += 1;
        found.bytes += piece.len();
        found.theirs += theirs;
        found.ours += ours as u64;
        if theirs != ours as u64 {
            found.differ.push((piece, theirs, ours));
        }
    }
    assert!(found.bytes >= 1 << 20, "{} bytes", found.bytes);
    // The server counted with the real vocabulary (a byte-level one would count about a token a
    // byte), so an equal count is a real agreement.
    assert!(
        found.theirs * 2 < found.bytes as u64,
        "{} tokens for {} bytes",
        found.theirs,
        found.bytes
    );
    found
}

fn report(name: &str, found: &Comparison) -> String {
    let mut text = format!(
        "{name}: {} of {} pieces differ; llama.cpp counted {} tokens, Pinloom {}, in {} bytes\n",
        found.differ.len(),
        found.pieces,
        found.theirs,
        found.ours,
        found.bytes
    );
    for (piece, theirs, ours) in found.differ.iter().take(10) {
        text.push_str(&format!("  llama.cpp {theirs}, Pinloom {ours}: {piece:?}\n"));
    }
    text
}

#[test]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
fn llama3_counts_equal_llama_cpps_on_a_megabyte_of_mixed_text() {
    let found = compare(Vocabulary::Llama3, Encoding::Llama3, str::to_owned);
    eprintln!("{}", report("Llama 3", &found));
    assert!(found.differ.is_empty(), "{}", report("Llama 3", &found));
}

/// Qwen's own tokenizer normalises text to NFC before splitting it, and so does Pinloom;
/// llama.cpp does not (see the crate's README): given the same text, it counts a decomposed
/// letter (a base letter and a combining mark) as more tokens. Given the text NFC-normalised, as
/// Qwen's tokenizer sees it, its counts equal Pinloom's.
#[test]
#[ignore = "needs llama.cpp's server: ./dev test llama"]
fn qwen_counts_equal_llama_cpps_on_a_megabyte_of_mixed_text_normalised_as_qwen_does() {
    let found = compare(Vocabulary::Qwen, Encoding::Qwen, |text| text.nfc().collect());
    assert!(found.differ.is_empty(), "{}", report("Qwen", &found));
    eprintln!("{}", report("Qwen, NFC-normalised", &found));
    let unnormalised = compare(Vocabulary::Qwen, Encoding::Qwen, str::to_owned);
    eprintln!("{}", report("Qwen, as written", &unnormalised).lines().next().unwrap_or_default());
    assert!(
        unnormalised.differ.iter().all(|(piece, _, _)| piece.nfc().collect::<String>() != *piece),
        "only text NFC changes differs: {}",
        report("Qwen, not normalised", &unnormalised)
    );
    assert!(!unnormalised.differ.is_empty(), "the corpus has decomposed letters");
}
