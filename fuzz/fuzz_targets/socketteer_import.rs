//! socketteer/loom's saved trees: arbitrary bytes imported into a database in memory and exported
//! again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinloom_app::{FuzzedImporter, import_fuzz_case};

fuzz_target!(|data: &[u8]| {
    import_fuzz_case(FuzzedImporter::Socketteer, data);
});
