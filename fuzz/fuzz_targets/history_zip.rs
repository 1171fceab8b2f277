//! Arbitrary bytes read as an export's zip as downloaded (entries checked before inflating, images
//! beside the conversations), imported into a database in memory; cases whose content says they are
//! another history are skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::{FuzzedHistory, history_fuzz_case};

fuzz_target!(|data: &[u8]| {
    history_fuzz_case(FuzzedHistory::Zip, data);
});
