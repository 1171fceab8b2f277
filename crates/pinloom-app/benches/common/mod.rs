//! What the application benchmarks share.

/// A message of about 400 bytes of river prose, the same for the same `seed`.
pub(crate) fn message(seed: usize) -> String {
    const WORDS: [&str; 12] = [
        "rivers", "carry", "silt", "past", "the", "bend", "where", "water", "slows", "and",
        "banks", "erode",
    ];
    let mut text = String::with_capacity(420);
    let mut state = seed as u64 * 2_654_435_761 + 1;
    while text.len() < 400 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
        text.push(' ');
    }
    text
}
