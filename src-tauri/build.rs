fn main() {
    // `generate_context!` embeds ui/dist into the binary, but nothing tells cargo the embedded
    // files changed: without this, a rebuilt UI would ship in the next binary only by chance.
    println!("cargo:rerun-if-changed=ui/dist");
    // Listing the app's commands makes each one need an explicit grant in a capability, so the
    // window can call exactly what tauri.conf.json allows and nothing else.
    let manifest = tauri_build::AppManifest::new().commands(pinloom_desktop_commands::ALL);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
        .expect("tauri-build failed; see the message above");
}

/// The command names, shared with the runtime through `src-tauri/src/command_names.rs`.
// The list is `pub` there because the shell library exports it to its tests; here it is private.
#[allow(unreachable_pub)]
mod pinloom_desktop_commands {
    include!("src/command_names.rs");
}
