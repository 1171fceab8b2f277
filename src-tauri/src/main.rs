// No console window behind the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Started again by itself to read a PDF apart (the extractor may crash on a hostile one),
    // before any window or runtime exists.
    pinloom_app::serve_pdf_reader_if_asked();
    pinloom_desktop::run();
}
