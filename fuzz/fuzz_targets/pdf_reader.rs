//! PDFs: arbitrary bytes read as an attached file's are, by this very program started again as
//! the reader (`--pinloom-read-pdf`, served from the fuzzer's start-up hook). The reader may
//! die on a hostile PDF; the side that started it may not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        pinloom_app::serve_pdf_reader_if_asked();
    },
    |data: &[u8]| {
        drop(pinloom_app::pdf_fuzz_case(data));
    }
);
