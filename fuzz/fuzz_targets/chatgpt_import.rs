//! Arbitrary bytes read as ChatGPT's conversations.json, imported into a database in memory; cases
//! whose content says they are another history are skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::{FuzzedHistory, history_fuzz_case};

fuzz_target!(|data: &[u8]| {
    history_fuzz_case(FuzzedHistory::ChatGpt, data);
});
