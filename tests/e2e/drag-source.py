"""A window that offers files for dragging, as a file manager does: the end-to-end tests drag
from it onto Pinloom's window with the X pointer, so the drop goes through X's drag-and-drop
protocol and the webview exactly as a person's would.

Usage: drag-source.py X Y FILE...  (the window's top-left corner on the screen, and the files)
It prints "ready" once shown and quits when the drag ends.
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def main() -> None:
    x, y, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    window = Gtk.Window(title="pinloom-drag-source")
    window.set_default_size(160, 120)
    window.move(x, y)
    source = Gtk.EventBox()
    source.add(Gtk.Label(label=f"{len(paths)} file(s)"))
    window.add(source)
    source.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
    source.drag_source_add_uri_targets()
    source.connect(
        "drag-data-get",
        lambda _widget, _context, data, _info, _time: data.set_uris(
            [GLib.filename_to_uri(path, None) for path in paths]
        ),
    )
    source.connect("drag-end", lambda *_: GLib.timeout_add(300, Gtk.main_quit))
    window.connect("destroy", Gtk.main_quit)
    window.connect("map-event", lambda *_: print("ready", flush=True))
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
