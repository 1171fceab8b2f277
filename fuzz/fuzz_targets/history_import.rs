//! Other tools' conversation files (ChatGPT's, Claude's, Open WebUI's exports): arbitrary bytes
//! streamed a conversation at a time into a database in memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::history_fuzz_case;

fuzz_target!(|data: &[u8]| {
    history_fuzz_case(data);
});
