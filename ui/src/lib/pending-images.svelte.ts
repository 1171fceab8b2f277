// Images waiting to go with the message being written in one column's composer: pasted, or
// chosen with the system's dialog and read by the shell. They go with the next send of a new
// message and stay until that message is written, so a refused send (a model that does not see
// images) loses none of them.
import { backend, showingFailure, type PinloomError } from "./backend";
import type { ImageInput } from "./bindings";

/// The image files a paste holds. A copied screenshot is a file item of the clipboard; copied
/// files are in `files` too, and some engines list them only there.
export function imageFilesIn(clipboard: Pick<DataTransfer, "items" | "files"> | null): File[] {
  if (!clipboard) return [];
  const fromItems = Array.from(clipboard.items ?? [])
    .filter((item) => item.kind === "file" && item.type.startsWith("image/"))
    .map((item) => item.getAsFile())
    .filter((file): file is File => file !== null);
  if (fromItems.length > 0) return fromItems;
  return Array.from(clipboard.files ?? []).filter((file) => file.type.startsWith("image/"));
}

/// A file's bytes as a `data:` URL, as the backend takes an image.
function dataUrlOf(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the pasted image could not be read"));
    reader.readAsDataURL(file);
  });
}

export class PendingImages {
  /// Replaced whole, never changed in place: each holds its image's bytes as a long `data:`
  /// URL, which a deep proxy would only slow.
  list = $state.raw<ImageInput[]>([]);
  error = $state<PinloomError | null>(null);
  /// How many images without a name of their own were pasted: the next one is named after it.
  private unnamed = 0;

  /// Reads pasted image files; one that cannot be read is said and the others are still kept.
  /// True when all were read.
  async paste(files: File[]): Promise<boolean> {
    this.error = null;
    let all = true;
    for (const file of files) {
      const kept = await showingFailure(this, false, async () => {
        const dataUrl = await dataUrlOf(file);
        this.list = [...this.list, { name: file.name || `pasted image ${++this.unnamed}.${extensionOf(file.type)}`, dataUrl }];
        return true;
      });
      if (!kept) all = false;
    }
    return all;
  }

  /// Asks for images with the system's dialog and reads what was chosen; true when everything
  /// chosen was read (nothing chosen included).
  async choose(): Promise<boolean> {
    this.error = null;
    const paths = await showingFailure(this, null, () => backend.chooseAttachments(false));
    if (paths === null) return false;
    return this.read(paths);
  }

  /// Reads the images at `paths` (chosen in the dialog or dropped); one refused (not an image,
  /// too large) is said and the others are still kept. True when all were read.
  async read(paths: string[]): Promise<boolean> {
    this.error = null;
    let all = true;
    for (const path of paths) {
      const kept = await showingFailure(this, false, async () => {
        const image = await backend.imageRead(path);
        this.list = [...this.list, image];
        return true;
      });
      if (!kept) all = false;
    }
    return all;
  }

  /// Takes `image` off the message being written.
  remove(image: ImageInput): void {
    this.list = this.list.filter((waiting) => waiting !== image);
    this.error = null;
  }

  /// `images` were written with a message: they wait no longer. Images added while it was being
  /// sent wait for the next one.
  sent(images: ImageInput[]): void {
    this.list = this.list.filter((waiting) => !images.includes(waiting));
  }
}

/// The usual file extension of an image's media type, for naming a pasted image that came
/// without a name (`image/jpeg` → `jpg`).
function extensionOf(mediaType: string): string {
  const subtype = mediaType.split("/")[1] ?? "png";
  return subtype === "jpeg" ? "jpg" : subtype.replace(/[^a-z0-9]/g, "") || "png";
}
