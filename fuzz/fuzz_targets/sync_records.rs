//! What a sync folder brings: lines of records and operations, admitted and folded into a
//! database in memory, from a team's folder or the person's own remote.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::sync_fuzz_case;

fuzz_target!(|data: &[u8]| {
    sync_fuzz_case(data);
});
