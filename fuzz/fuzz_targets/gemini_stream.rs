//! Gemini SSE (no end marker, finish reasons on any frame): arbitrary bytes, cut into arbitrary chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_providers::decode::decode_fuzz_case;
use pinloom_providers::wire::ProviderId;

fuzz_target!(|data: &[u8]| {
    decode_fuzz_case(ProviderId::Gemini, data);
});
