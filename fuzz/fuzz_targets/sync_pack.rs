//! A sync folder's pack as the remote holds it: its zstd frame, its age encryption (in a sealed
//! folder), its header and lines, read with the bounds a sync reads them with.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::pack_fuzz_case;

fuzz_target!(|data: &[u8]| {
    pack_fuzz_case(data);
});
