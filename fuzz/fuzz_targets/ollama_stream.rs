//! Ollama NDJSON (chat and generate): arbitrary bytes, cut into arbitrary chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_providers::decode::decode_fuzz_case;
use pinloom_providers::wire::ProviderId;

fuzz_target!(|data: &[u8]| {
    decode_fuzz_case(ProviderId::Ollama, data);
});
