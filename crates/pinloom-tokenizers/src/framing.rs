//! How the files this crate keeps in the cache folder are framed: eight bytes naming the kind of
//! file (and its version), the body, and a checksum of both. One framing for the tables'
//! snapshots and for the remembered counts.
//!
//! The checksum tells a damaged file from a whole one and nothing more: whatever can write the
//! cache folder can compute it again. What a body says is checked for itself (a snapshot's
//! tables entry by entry against the vocabulary, remembered counts against their texts' lengths).

/// The bytes of a file of kind `magic` holding `body`.
pub(crate) fn frame(magic: &[u8; 8], body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(magic.len() + body.len() + 8);
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(body);
    let sum = checksum(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    bytes
}

/// The body of `bytes` if they are one whole file of kind `magic`, or `None`.
pub(crate) fn unframe<'a>(magic: &[u8; 8], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let (framed, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    let body = framed.strip_prefix(magic.as_slice())?;
    (checksum(framed).to_le_bytes() == sum).then_some(body)
}

/// FNV-1a over 64 bits, taking 8-byte little-endian words and then the last bytes one by one:
/// fast over a snapshot's tens of megabytes, and the same on every machine.
pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut words = bytes.chunks_exact(8);
    let mut hash = (&mut words).fold(0xcbf2_9ce4_8422_2325_u64, |hash, word| {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        (hash ^ word).wrapping_mul(PRIME)
    });
    for byte in words.remainder() {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(PRIME);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::{checksum, frame, unframe};

    const MAGIC: &[u8; 8] = b"PLTEST01";

    #[test]
    fn a_framed_body_is_read_back_whole() {
        for body in [&b""[..], b"x", b"seven b", b"exactly eight bytes.", &[7u8; 1000]] {
            assert_eq!(unframe(MAGIC, &frame(MAGIC, body)), Some(body));
        }
    }

    #[test]
    fn a_damaged_short_or_other_file_is_refused() {
        let framed = frame(MAGIC, b"a body of some length");
        for at in 0..framed.len() {
            let mut damaged = framed.clone();
            damaged[at] ^= 0x20;
            assert_eq!(unframe(MAGIC, &damaged), None, "a flipped bit at byte {at}");
        }
        assert_eq!(unframe(MAGIC, &framed[..framed.len() - 1]), None);
        assert_eq!(unframe(MAGIC, &framed[..7]), None);
        assert_eq!(unframe(b"PLTEST02", &framed), None, "another kind of file");
    }

    #[test]
    fn the_checksum_is_fnv_1a_over_little_endian_words() {
        // Worked by hand: one word, then one byte.
        let word = u64::from_le_bytes(*b"abcdefgh");
        let one = (0xcbf2_9ce4_8422_2325_u64 ^ word).wrapping_mul(0x0000_0100_0000_01b3);
        let two = (one ^ u64::from(b'i')).wrapping_mul(0x0000_0100_0000_01b3);
        assert_eq!(checksum(b"abcdefghi"), two);
        assert_ne!(checksum(b"abcdefghi"), checksum(b"abcdefgih"));
    }
}
