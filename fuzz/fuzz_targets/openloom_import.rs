//! Open Loom v2 documents: arbitrary bytes imported into a database in memory and exported again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::{FuzzedImporter, import_fuzz_case};

fuzz_target!(|data: &[u8]| {
    import_fuzz_case(FuzzedImporter::OpenLoom, data);
});
