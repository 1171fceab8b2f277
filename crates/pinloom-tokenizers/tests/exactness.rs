//! quicktok's counts, as built here (embedded vocabularies, Pinloom's compiler flags), equal the
//! reference tokenizers': tiktoken (through tiktoken-rs, which runs OpenAI's own BPE core) for
//! o200k and cl100k on arbitrary text and on a corpus of characters that trip tokenizers up, and
//! the token ids quicktok's release ships from Meta's and Qwen's tokenizers for Llama 3 and Qwen.

use pinloom_tokenizers::Encoding;
use proptest::prelude::*;

fn tiktoken_counts(text: &str) -> (usize, usize) {
    (
        tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len(),
        tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len(),
    )
}

fn assert_equals_tiktoken(text: &str) {
    let (o200k, cl100k) = tiktoken_counts(text);
    assert_eq!(Encoding::O200k.count(text), o200k, "o200k on {text:?}");
    assert_eq!(Encoding::Cl100k.count(text), cl100k, "cl100k on {text:?}");
}

/// Texts where tokenizers tend to part ways: scripts without spaces, joined emoji, whitespace
/// runs, long numbers, combining marks, invisible and private-use characters, contractions,
/// carriage returns, and the spelling of special tokens.
fn hidden_character_corpus() -> Vec<String> {
    vec![
        "日本語のテキストと中文文本，还有한국어 텍스트。".repeat(40),
        "噜噜亚洲AV中文ENGLISH日本語XY한국어KRΩβγXYZ".to_owned(),
        "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇯🇵🇫🇷 ✨🎉🎉🎉 emoji between words".repeat(30),
        format!("a{}b{}c\t\t\t\n\n\n  \u{a0}\u{3000}x", " ".repeat(1_000), "\n".repeat(500)),
        " \t \n \r\n \u{2028}\u{2029}\u{85}\u{b}\u{c} end".repeat(50),
        "1234567890".repeat(300),
        "3.14159265358979323846264338327950288419716939937510 -0.000001e-10 0x7fffffff".repeat(30),
        "e\u{301}\u{301}\u{301} cafe\u{301} caf\u{e9} A\u{30a} \u{212b}".repeat(60),
        "zero\u{200b}width\u{200c}non\u{200d}joiner\u{feff}bom\u{202e}rtl\u{2066}isolate"
            .repeat(40),
        "\u{10ffff}\u{e000}\u{f8ff}\u{fffd}\u{fffe}𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ℌ𝔢𝔩𝔩𝔬 𝟙𝟚𝟛".repeat(40),
        "I'm we'll THEY'RE you'VE 's 't 're    'll \u{2019}s O'Brien's".repeat(40),
        "<|endoftext|> <|im_start|>user\n<|im_end|> <|begin_of_text|> [INST]".repeat(20),
        "fn main() {\n    println!(\"{}\", 1 + 2);\n}\n\t\t// ✓ done\r\n".repeat(40),
        "\u{0}\u{1}\u{7f}\u{80}\u{9f} control".repeat(20),
    ]
}

#[test]
fn counts_equal_tiktoken_on_the_hidden_character_corpus() {
    for text in hidden_character_corpus() {
        assert_equals_tiktoken(&text);
    }
}

/// Characters drawn from the corpus's troublesome kinds, in any order and length.
fn troublesome_text() -> impl Strategy<Value = String> {
    let kinds = prop::sample::select(vec![
        'a',
        'Z',
        's',
        't',
        '\'',
        ' ',
        ' ',
        '\n',
        '\r',
        '\t',
        '1',
        '9',
        '.',
        ',',
        '日',
        '語',
        '中',
        '한',
        '。',
        '，',
        '😀',
        '👍',
        '🏽',
        '\u{200d}',
        '🇯',
        '🇵',
        '✨',
        '\u{301}',
        '\u{a0}',
        '\u{3000}',
        '\u{200b}',
        '\u{feff}',
        '\u{10ffff}',
        '\u{e000}',
        'é',
        'ß',
        'Ω',
        '<',
        '|',
        '>',
    ]);
    prop::collection::vec(kinds, 0..300).prop_map(|characters| characters.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn counts_equal_tiktoken_on_any_text(text in "\\PC{0,200}") {
        let (o200k, cl100k) = tiktoken_counts(&text);
        prop_assert_eq!(Encoding::O200k.count(&text), o200k);
        prop_assert_eq!(Encoding::Cl100k.count(&text), cl100k);
    }

    #[test]
    fn counts_equal_tiktoken_on_troublesome_text(text in troublesome_text()) {
        let (o200k, cl100k) = tiktoken_counts(&text);
        prop_assert_eq!(Encoding::O200k.count(&text), o200k);
        prop_assert_eq!(Encoding::Cl100k.count(&text), cl100k);
    }
}

/// The release's reference vectors: `u32` case count, then per case the UTF-8 text's length and
/// bytes and the reference ids' count and ids, all little-endian.
fn reference_cases(file: &str) -> Vec<(String, usize)> {
    let path = std::path::Path::new(env!("PINLOOM_QUICKTOK_VECTORS")).join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut at = 0;
    let next_u32 = |bytes: &[u8], at: &mut usize| {
        let word = u32::from_le_bytes(bytes[*at..*at + 4].try_into().expect("four bytes"));
        *at += 4;
        word as usize
    };
    let cases = next_u32(&bytes, &mut at);
    (0..cases)
        .map(|_| {
            let length = next_u32(&bytes, &mut at);
            let text = String::from_utf8(bytes[at..at + length].to_vec()).expect("UTF-8 case");
            at += length;
            let ids = next_u32(&bytes, &mut at);
            at += 4 * ids;
            (text, ids)
        })
        .collect()
}

#[test]
fn counts_equal_the_reference_tokenizers_vectors() {
    for (encoding, file) in [
        (Encoding::Cl100k, "vectors.bin"),
        (Encoding::O200k, "vectors_o200k.bin"),
        (Encoding::Llama3, "vectors_llama3.bin"),
        (Encoding::Qwen, "vectors_qwen3.bin"),
    ] {
        let cases = reference_cases(file);
        assert!(cases.len() >= 10, "{file} holds {} cases", cases.len());
        for (text, ids) in cases {
            assert_eq!(encoding.count(&text), ids, "{encoding:?} on {text:?}");
        }
    }
}

#[test]
fn each_encoding_uses_its_own_vocabulary() {
    // Guards against an encoding silently loading another's vocabulary: Qwen splits numbers into
    // single digits, and Llama 3 added tokens for languages cl100k spells out byte by byte.
    assert_eq!(Encoding::Qwen.count("1234567"), 7);
    assert_eq!(Encoding::Cl100k.count("1234567"), 3);
    let hindi = "नमस्ते, आप कैसे हैं? मैं ठीक हूँ।";
    assert!(Encoding::Llama3.count(hindi) < Encoding::Cl100k.count(hindi));
}
