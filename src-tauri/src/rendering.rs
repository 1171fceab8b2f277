//! How the window's web view draws. WebKitGTK composites a page through OpenGL by default; on a
//! machine without a GPU (a virtual machine, a remote desktop, a container) that OpenGL is Mesa's
//! software rasteriser, which redraws the whole window on the processor every frame and keeps
//! every scrolled area's tiles in memory. Measured on such a machine (`tests/perf/README.md`):
//! panning the tree map ran at 12-15 frames a second composited and 91-111 painted directly, and
//! the web process held about 100 MB more with a tree open. So where the machine offers no GPU render
//! node, the view paints directly; where it does, WebKit's default stays.
//!
//! `PINLOOM_COMPOSITING=on` or `off` overrides the choice (a GPU whose driver WebKit cannot use
//! shows as a render node; `off` helps there), and WebKit's own `WEBKIT_DISABLE_COMPOSITING_MODE`
//! still applies.

use std::path::Path;

/// The environment variable that overrides the choice: `on` composites, `off` paints directly.
pub(crate) const COMPOSITING_ENV: &str = "PINLOOM_COMPOSITING";

/// Whether the web view should composite through OpenGL: what `PINLOOM_COMPOSITING` says, or
/// else whether `dri` (the kernel's DRM device folder) holds a render node, which every GPU with
/// a driver Mesa can use has. Anything else in the variable is refused with what to write
/// (`apply` logs it).
pub(crate) fn composites(setting: Option<&str>, dri: &Path) -> Result<bool, String> {
    match setting.map(str::trim) {
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some("") | None => Ok(has_render_node(dri)),
        Some(other) => Err(format!(
            "{COMPOSITING_ENV}={other} is not understood: use on or off (until then the window \
             composites only where the machine has a GPU render node)"
        )),
    }
}

fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Where Linux lists GPU devices.
pub(crate) const DRI_FOLDER: &str = "/dev/dri";

/// Makes `window`'s web view paint directly instead of compositing through OpenGL when
/// [`composites`] says no. Called right after the window is made, before its page has drawn.
pub(crate) fn apply<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) -> tauri::Result<()> {
    let setting = std::env::var(COMPOSITING_ENV).ok();
    let composite = composites(setting.as_deref(), Path::new(DRI_FOLDER)).unwrap_or_else(|error| {
        tracing::warn!(%error, "the web view's drawing");
        has_render_node(Path::new(DRI_FOLDER))
    });
    if composite {
        return Ok(());
    }
    paint_directly(window)
}

#[cfg(target_os = "linux")]
fn paint_directly<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) -> tauri::Result<()> {
    window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = WebViewExt::settings(&webview.inner()) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    })
}

/// Other systems' web views choose for themselves.
#[cfg(not(target_os = "linux"))]
fn paint_directly<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) -> tauri::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_and_a_render_node_decides_otherwise() {
        let empty = tempfile::tempdir().expect("a temporary folder");
        let with_gpu = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(with_gpu.path().join("card0"), b"").expect("a card");
        std::fs::write(with_gpu.path().join("renderD128"), b"").expect("a render node");
        let card_only = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(card_only.path().join("card0"), b"").expect("a card");

        assert_eq!(composites(None, with_gpu.path()), Ok(true));
        assert_eq!(
            composites(None, card_only.path()),
            Ok(false),
            "a display card alone renders nothing"
        );
        assert_eq!(composites(None, empty.path()), Ok(false));
        assert_eq!(composites(None, &empty.path().join("missing")), Ok(false));
        assert_eq!(composites(Some(""), with_gpu.path()), Ok(true));
        assert_eq!(composites(Some("off"), with_gpu.path()), Ok(false));
        assert_eq!(composites(Some(" on "), empty.path()), Ok(true));
        let refused = composites(Some("yes"), empty.path()).expect_err("not understood");
        assert!(refused.contains("use on or off"), "{refused}");
    }
}
