//! Token counting: exact OpenAI tokenizers, calibrated estimates, and the seeds' heuristics.
//!
//! Three kinds of counter sit behind one [`Tokenizer`]:
//! - **exact** counts for OpenAI's o200k and cl100k and for the open Llama 3 and Qwen models,
//!   through quicktok-v1 (`pinloom-tokenizers`), whose counts equal the reference tokenizers' and
//!   which measured 3–5× faster than bpe-openai, used before it (`benches/README.md`);
//! - a **calibrated estimate** for families without a public offline tokenizer (Claude, Gemini,
//!   other local models): characters per token, corrected from the usage each provider reports;
//! - the seeds' **named heuristics**, kept exact so that outputs can match the systems they come
//!   from: ThreadMind estimates one token per 3.5 characters, seed 001 one per 4. Both round up.
//!
//! The planner never calls these on a node whose count is cached for the same [`TokenizerId`].

use pinloom_tokenizers::Encoding;

/// A characters-per-token heuristic named by one of the seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CharHeuristic {
    /// ThreadMind (seed 000): `ceil(length / 3.5)`.
    ThreeAndAHalfChars,
    /// Seed 001's memory framework: `ceil(length / 4)`.
    FourChars,
}

impl CharHeuristic {
    /// The heuristic's name in the front ends' JSON: stable, camelCase.
    pub fn as_str(self) -> &'static str {
        match self {
            CharHeuristic::ThreeAndAHalfChars => "threeAndAHalfChars",
            CharHeuristic::FourChars => "fourChars",
        }
    }

    /// Estimates the tokens of `text`.
    ///
    /// The length is counted in UTF-16 code units, because both seeds are JavaScript programs
    /// whose `text.length` counts those; counting bytes or scalar values would drift from their
    /// numbers on any text outside ASCII.
    pub fn estimate(self, text: &str) -> u64 {
        let units = text.encode_utf16().count() as u64;
        match self {
            // ceil(units / 3.5) == ceil(2 * units / 7), kept in integers so no float rounding
            // can disagree with JavaScript's Math.ceil on large inputs.
            CharHeuristic::ThreeAndAHalfChars => (2 * units).div_ceil(7),
            CharHeuristic::FourChars => units.div_ceil(4),
        }
    }
}

/// Which counter a count was made with; cached counts are valid only for the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenizerId {
    /// OpenAI's o200k_base (GPT-4o, GPT-4.1, GPT-5, o-series).
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// Meta's Llama 3 (3, 3.1, 3.2, 3.3).
    Llama3,
    /// Qwen 2, 2.5 and 3.
    Qwen,
    /// A calibrated estimate at this many thousandths of a character per token.
    Estimate {
        /// UTF-16 units per token, times 1000.
        milli_chars_per_token: u32,
    },
    /// One of the seeds' heuristics.
    Chars(CharHeuristic),
}

/// A characters-per-token estimate for a model family without an offline tokenizer, corrected from
/// the usage the provider reports.
///
/// Kept in integers (thousandths) so that a count is a pure function of the id: two front ends
/// with the same calibration produce the same plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calibration {
    /// UTF-16 units per token, times 1000.
    pub milli_chars_per_token: u32,
}

impl Calibration {
    /// Claude: local chars/4 under-counts Claude by 23–40 % (engine_anchors §1.4), so start at a
    /// conservative 3 characters a token until usage corrects it.
    pub const ANTHROPIC_START: Calibration = Calibration { milli_chars_per_token: 3_000 };
    /// Gemini: Google's "about 4 characters a token", made conservative.
    pub const GEMINI_START: Calibration = Calibration { milli_chars_per_token: 3_500 };
    /// Local models (Llama, Mistral, Qwen through Ollama): a conservative 3.5.
    pub const LOCAL_START: Calibration = Calibration { milli_chars_per_token: 3_500 };

    /// The bounds a correction may move the ratio to: outside them a report is more likely a
    /// mismatch (an image, a cached prefix) than a property of the tokenizer.
    const MIN_MILLI: u32 = 1_000;
    const MAX_MILLI: u32 = 8_000;

    /// Estimates the tokens of `text`, rounding up.
    pub fn estimate(self, text: &str) -> u64 {
        let units = text.encode_utf16().count() as u64;
        (units * 1000).div_ceil(u64::from(self.milli_chars_per_token.max(1)))
    }

    /// Corrects the ratio from one reply's usage: `sent_chars` UTF-16 units were sent and the
    /// provider billed `reported_tokens` input tokens. Moves a quarter of the way to the observed
    /// ratio, so one odd report (a cached prefix, an image) cannot swing the estimate.
    pub fn corrected(self, sent_chars: u64, reported_tokens: u64) -> Calibration {
        if reported_tokens == 0 || sent_chars == 0 {
            return self;
        }
        let observed = (sent_chars * 1000 / reported_tokens)
            .clamp(u64::from(Self::MIN_MILLI), u64::from(Self::MAX_MILLI));
        let current = u64::from(self.milli_chars_per_token);
        let moved = (current * 3 + observed) / 4;
        Calibration { milli_chars_per_token: u32::try_from(moved).unwrap_or(Self::MAX_MILLI) }
    }
}

/// A token counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// Exact o200k_base.
    O200k,
    /// Exact cl100k_base.
    Cl100k,
    /// Exact Llama 3.
    Llama3,
    /// Exact Qwen 2, 2.5 and 3.
    Qwen,
    /// A calibrated estimate.
    Estimate(Calibration),
    /// A seed's named heuristic.
    Chars(CharHeuristic),
}

impl Tokenizer {
    /// The id under which this counter's counts are cached.
    pub fn id(self) -> TokenizerId {
        match self {
            Tokenizer::O200k => TokenizerId::O200k,
            Tokenizer::Cl100k => TokenizerId::Cl100k,
            Tokenizer::Llama3 => TokenizerId::Llama3,
            Tokenizer::Qwen => TokenizerId::Qwen,
            Tokenizer::Estimate(c) => {
                TokenizerId::Estimate { milli_chars_per_token: c.milli_chars_per_token }
            }
            Tokenizer::Chars(h) => TokenizerId::Chars(h),
        }
    }

    /// Counts the tokens of `text`.
    pub fn count(self, text: &str) -> u64 {
        match self {
            Tokenizer::O200k | Tokenizer::Cl100k | Tokenizer::Llama3 | Tokenizer::Qwen => {
                self.encoding().map_or(text.len(), |encoding| encoding.count(text)) as u64
            }
            Tokenizer::Estimate(c) => c.estimate(text),
            Tokenizer::Chars(h) => h.estimate(text),
        }
    }

    /// Counts `text`, a fixed text of the settings that no store keeps a count of, remembering an
    /// exact count on this machine so that a later process need not load the vocabulary for it
    /// (`pinloom_tokenizers::Encoding::count_remembered`). The count is the same as
    /// [`count`](Tokenizer::count)'s.
    pub fn count_remembered(self, text: &str) -> u64 {
        match self.encoding() {
            Some(encoding) => encoding.count_remembered(text) as u64,
            None => self.count(text),
        }
    }

    /// Counts the truncation marker `template` with its `{count}` written as `omitted`: the same
    /// as counting the text, but for an exact counter from the remembered counts of the words
    /// around the number (`pinloom_tokenizers::Encoding::count_around_number`), so a plan that
    /// cuts history loads no vocabulary when every message's count is stored.
    pub fn count_marker(self, template: &str, omitted: u64) -> u64 {
        match (self.encoding(), template.split_once("{count}")) {
            (Some(encoding), Some((before, after))) if !after.contains("{count}") => {
                encoding.count_around_number(before, omitted, after) as u64
            }
            _ => self.count(&template.replace("{count}", &omitted.to_string())),
        }
    }

    /// The exact encoding behind this counter, if it is one.
    fn encoding(self) -> Option<Encoding> {
        match self {
            Tokenizer::O200k => Some(Encoding::O200k),
            Tokenizer::Cl100k => Some(Encoding::Cl100k),
            Tokenizer::Llama3 => Some(Encoding::Llama3),
            Tokenizer::Qwen => Some(Encoding::Qwen),
            Tokenizer::Estimate(_) | Tokenizer::Chars(_) => None,
        }
    }

    /// Whether counts are exact (and so worth storing with each message).
    pub fn is_exact(self) -> bool {
        self.encoding().is_some()
    }

    /// Loads an exact counter's vocabulary now instead of at its first count (0.1–0.4 s), so a
    /// front end can do it in the background while the person reads; estimates load nothing.
    /// A vocabulary that cannot load is reported here and counted cautiously (by bytes) later.
    pub fn load_ahead(self) -> Result<(), pinloom_tokenizers::LoadError> {
        self.encoding().map_or(Ok(()), Encoding::load)
    }

    /// Counts `text`, saturating into the `u32` that plans and caches hold (4 billion tokens is
    /// far past any window).
    pub fn count_u32(self, text: &str) -> u32 {
        u32::try_from(self.count(text)).unwrap_or(u32::MAX)
    }

    /// The longest end of `text` that counts at most `limit` tokens, starting at a character
    /// boundary, and after a space or line break when one is near, so no word is split. Found by
    /// binary search over where it starts: about log₂(length) counts of ever shorter ends. BPE
    /// counts are not strictly monotone in length, so the result is counted once more and moved
    /// later until it fits.
    pub fn tail_within(self, text: &str, limit: u64) -> &str {
        if self.count(text) <= limit {
            return text;
        }
        let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        // The answer's start is in starts[low..=high]; the empty end (at text.len()) always fits.
        let (mut low, mut high) = (0, starts.len());
        while low < high {
            let mid = low + (high - low) / 2;
            if self.count(&text[starts[mid]..]) <= limit {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let mut start = starts.get(low).copied().unwrap_or(text.len());
        // Begin at the next word when one starts within a few characters.
        if let Some(gap) = text[start..].char_indices().take(24).find(|(_, c)| c.is_whitespace()) {
            start += gap.0 + gap.1.len_utf8();
        }
        while start < text.len() && self.count(&text[start..]) > limit {
            start += text[start..].chars().next().map_or(1, char::len_utf8);
        }
        &text[start..]
    }

    /// The longest start of `text` that counts at most `limit` tokens, ending at a character
    /// boundary, and before a space or line break when one is near, so no word is split: what a
    /// summary that came back over its budget is cut to. The mirror of
    /// [`tail_within`](Tokenizer::tail_within).
    pub fn head_within(self, text: &str, limit: u64) -> &str {
        if self.count(text) <= limit {
            return text;
        }
        let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        ends.push(text.len());
        // The answer's end is in ends[low..=high]; the empty start (end 0) always fits.
        let (mut low, mut high) = (0, ends.len() - 1);
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if self.count(&text[..ends[mid]]) <= limit {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let mut end = ends[low];
        // End at the previous word break when one is within a few characters.
        if let Some((gap, _)) =
            text[..end].char_indices().rev().take(24).find(|(_, c)| c.is_whitespace())
        {
            end = gap;
        }
        while end > 0 && self.count(&text[..end]) > limit {
            end = text[..end].char_indices().next_back().map_or(0, |(i, _)| i);
        }
        text[..end].trim_end()
    }
}
#[cfg(test)]
mod tests {
    use super::CharHeuristic::{FourChars, ThreeAndAHalfChars};
    use super::{Calibration, Tokenizer};

    #[test]
    fn a_head_within_a_limit_fits_and_ends_at_a_word() {
        let text = "Rivers meander because the outer bank erodes while the inner bank gains silt.";
        for tokenizer in [Tokenizer::O200k, Tokenizer::Chars(ThreeAndAHalfChars)] {
            for limit in [0, 1, 5, 9, 14] {
                let head = tokenizer.head_within(text, limit);
                assert!(tokenizer.count(head) <= limit, "{tokenizer:?} {limit}: {head:?}");
                assert!(text.starts_with(head));
                // A word break is looked for only within 24 characters of the cut.
                let next = text[head.len()..].chars().next();
                assert!(head.len() < 24 || next.is_none_or(char::is_whitespace), "{head:?}");
            }
            assert_eq!(tokenizer.head_within(text, 1_000), text);
        }
        let emoji = "🌊🌊🌊🌊";
        let head = Tokenizer::Chars(ThreeAndAHalfChars).head_within(emoji, 2);
        assert_eq!(
            head, "🌊🌊🌊",
            "6 UTF-16 units fit in 2 tokens, 8 do not; a character is never split"
        );
    }

    #[test]
    fn empty_text_is_zero_tokens() {
        assert_eq!(ThreeAndAHalfChars.estimate(""), 0);
        assert_eq!(FourChars.estimate(""), 0);
    }

    #[test]
    fn threadmind_rounds_up_at_three_and_a_half_chars_seed_000() {
        // 7 characters are exactly 2 tokens; one more starts a third.
        assert_eq!(ThreeAndAHalfChars.estimate("abcdefg"), 2);
        assert_eq!(ThreeAndAHalfChars.estimate("abcdefgh"), 3);
        assert_eq!(ThreeAndAHalfChars.estimate("abc"), 1);
        assert_eq!(ThreeAndAHalfChars.estimate("abcd"), 2, "4 / 3.5 = 1.14 rounds up to 2");
    }

    #[test]
    fn memory_framework_rounds_up_at_four_chars_seed_001() {
        assert_eq!(FourChars.estimate("abcd"), 1);
        assert_eq!(FourChars.estimate("abcde"), 2);
    }

    #[test]
    fn length_counts_utf16_units_like_javascript() {
        // "é" is one UTF-16 unit (two UTF-8 bytes); "😀" is two units (four bytes).
        assert_eq!(FourChars.estimate("éééé"), 1);
        assert_eq!(FourChars.estimate("😀😀"), 1);
        assert_eq!(FourChars.estimate("😀😀😀"), 2);
    }

    #[test]
    fn integer_form_matches_the_float_formula() {
        for units in 0..2_000u64 {
            let text = "x".repeat(units as usize);
            let expected = (units as f64 / 3.5).ceil() as u64;
            assert_eq!(ThreeAndAHalfChars.estimate(&text), expected, "at {units} characters");
        }
    }

    #[test]
    fn o200k_counts_equal_tiktoken_on_known_strings() {
        // Reference counts from tiktoken's o200k_base and cl100k_base (Python tiktoken 0.14).
        assert_eq!(Tokenizer::O200k.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100k.count("hello world"), 2);
        assert_eq!(Tokenizer::O200k.count(""), 0);
        assert_eq!(Tokenizer::Cl100k.count("tiktoken is great!"), 6);
    }

    #[test]
    fn calibrated_estimate_rounds_up_and_corrects_from_usage() {
        let start = Calibration { milli_chars_per_token: 4_000 };
        assert_eq!(start.estimate("abcdefghi"), 3, "9 / 4 rounds up");
        // The provider billed 100 tokens for 200 characters: 2 chars a token; move a quarter way.
        let corrected = start.corrected(200, 100);
        assert_eq!(corrected.milli_chars_per_token, 3_500);
        // A zero report changes nothing; an absurd one is clamped before it is blended.
        assert_eq!(start.corrected(200, 0), start);
        assert_eq!(start.corrected(1, 1_000).milli_chars_per_token, 3_250);
    }

    #[test]
    fn the_end_within_a_limit_fits_and_starts_at_a_word() {
        let text = "The first sentence sets the scene. Then the middle goes on for a while, and \
                    the end is what the next message answers: é😀 included.";
        for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Chars(FourChars)] {
            for limit in [0, 1, 5, 12, 20, 1_000] {
                let tail = tokenizer.tail_within(text, limit);
                assert!(tokenizer.count(tail) <= limit, "{tokenizer:?} {limit}: {tail:?}");
                assert!(text.ends_with(tail));
                if limit == 1_000 {
                    assert_eq!(tail, text, "a text that fits is whole");
                } else if !tail.is_empty() {
                    // After a space, unless no word starts near enough (a very short end).
                    let before = &text[..text.len() - tail.len()];
                    let word_near = tail.chars().take(24).any(char::is_whitespace);
                    assert!(
                        before.ends_with(char::is_whitespace) || !word_near,
                        "{tokenizer:?} {limit}: {tail:?}"
                    );
                }
            }
            // A larger limit never gives a shorter end by more than the word it skips.
            assert!(tokenizer.tail_within(text, 20).len() >= tokenizer.tail_within(text, 5).len());
        }
    }

    #[test]
    fn named_heuristics_are_tokenizer_options_seed_000_seed_001() {
        assert_eq!(Tokenizer::Chars(ThreeAndAHalfChars).count("abcdefgh"), 3);
        assert_eq!(Tokenizer::Chars(FourChars).count("abcdefgh"), 2);
    }
}
