//! Arbitrary bytes read as llm's logs.db (a SQLite file read by the store alone), imported into a
//! database in memory; cases whose content says they are another history are skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::{FuzzedHistory, history_fuzz_case};

fuzz_target!(|data: &[u8]| {
    history_fuzz_case(FuzzedHistory::LlmLog, data);
});
