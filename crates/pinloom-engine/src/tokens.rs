//! Token estimates by character count, as the seeds define them.
//!
//! These are the named heuristics of the seeds, kept exact so that outputs can match the systems
//! they come from: ThreadMind estimates one token per 3.5 characters, the memory framework of
//! seed 001 one per 4. Both round up. Exact tokenizers come later and sit beside these.

/// A characters-per-token heuristic named by one of the seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharHeuristic {
    /// ThreadMind (seed 000): `ceil(length / 3.5)`.
    ThreeAndAHalfChars,
    /// Seed 001's memory framework: `ceil(length / 4)`.
    FourChars,
}

impl CharHeuristic {
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

#[cfg(test)]
mod tests {
    use super::CharHeuristic::{FourChars, ThreeAndAHalfChars};

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
}
