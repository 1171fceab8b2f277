// Imports and exports of whole trees: through the system's file dialogs or by dropping files on
// the window. This module owns their progress, the last import's report and the last export;
// the sidebar and the tree header only show them.
import { backend, PinloomError, showingFailure } from "./backend";
import type { ExportDone, ExportFormat, ImportReportView, TransferProgress } from "./bindings";

/// What runs now, named for the person: "Importing weavers.json", "Exporting Rivers".
export type Running = { title: string; progress: TransferProgress | null };

export class Transfers {
  running = $state<Running | null>(null);
  /// The reports of the last import, one per file, as `pinloom import` prints them.
  reports = $state<{ file: string; report: ImportReportView }[]>([]);
  exported = $state<ExportDone | null>(null);
  error = $state<PinloomError | null>(null);

  /// Called with the trees an import wrote, so the list can refresh and open the first.
  onimported: (treeIds: number[]) => Promise<void> = async () => undefined;

  /// Asks for files with the system's dialog and imports them.
  async chooseAndImport(): Promise<void> {
    const picked = await showingFailure(this, null, () => backend.chooseImportFiles());
    if (picked === null) return;
    await this.importPaths(picked); // None when the person closed the dialog.
  }

  /// Imports each file in turn; one that fails is reported and the others still come in.
  async importPaths(paths: string[]): Promise<void> {
    if (this.running || paths.length === 0) return;
    this.error = null;
    this.exported = null;
    this.reports = [];
    const written: number[] = [];
    for (const path of paths) {
      const file = fileName(path);
      this.running = { title: `Importing ${file}`, progress: null };
      // Which file failed is said first: the others may have come in.
      const named = (error: PinloomError) => {
        this.error = new PinloomError({ code: error.code, message: `${file}: ${error.message}` });
      };
      await showingFailure(named, undefined, async () => {
        const report = await backend.treeImport(path, (progress) => {
          if (this.running) this.running = { ...this.running, progress };
        });
        this.reports = [...this.reports, { file, report }];
        written.push(...report.trees.map((tree) => tree.id));
      });
    }
    this.running = null;
    if (written.length > 0) await this.onimported(written);
  }

  /// Asks where to save the tree with the system's dialog and exports it there.
  async chooseAndExport(
    tree: { id: number; slug: string; title: string },
    format: ExportFormat,
    options: { withoutSystemPrompts: boolean; withoutRawResponses: boolean },
  ): Promise<void> {
    const extension = format === "openLoom" ? "json" : "md";
    const path = await showingFailure(this, undefined, () =>
      backend.chooseExportPath(`Export "${tree.title}"`, `${tree.slug}.${extension}`, format),
    );
    // Failed (said), or the person closed the dialog.
    if (path === undefined || path === null) return;
    await this.exportTo(tree, format, options, path);
  }

  async exportTo(
    tree: { id: number; title: string },
    format: ExportFormat,
    options: { withoutSystemPrompts: boolean; withoutRawResponses: boolean },
    path: string,
  ): Promise<void> {
    if (this.running) return;
    this.error = null;
    this.exported = null;
    this.reports = [];
    this.running = { title: `Exporting ${tree.title}`, progress: null };
    try {
      await showingFailure(this, undefined, async () => {
        this.exported = await backend.treeExport({ treeId: tree.id, format, path, ...options }, (progress) => {
          if (this.running) this.running = { ...this.running, progress };
        });
      });
    } finally {
      this.running = null;
    }
  }

  /// Closes the report and the last export's note.
  dismiss(): void {
    this.reports = [];
    this.exported = null;
    this.error = null;
  }
}

/// The last part of a path, for naming a file to the person.
export function fileName(path: string): string {
  return path.split(/[/\\]/).filter(Boolean).at(-1) ?? path;
}

/// A progress step as a bar and a line of text: `value` of `max`, or no value while it cannot be
/// measured.
export function progressShown(progress: TransferProgress | null): { text: string; value: number | null; max: number } {
  const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
  const count = (n: number) => n.toLocaleString("en");
  if (progress === null) return { text: "Starting…", value: null, max: 1 };
  switch (progress.stage) {
    case "reading":
      return { text: `Reading the file: ${mb(progress.bytes)} of ${mb(progress.total)} MB`, value: progress.bytes, max: Math.max(progress.total, 1) };
    case "checked":
      return { text: `Checked ${count(progress.total)} messages; writing them`, value: 0, max: Math.max(progress.total, 1) };
    case "writing":
      return { text: `Writing ${count(progress.messages)} of ${count(progress.total)} messages`, value: progress.messages, max: Math.max(progress.total, 1) };
    case "collecting":
      return { text: `Reading ${count(progress.messages)} of ${count(progress.total)} messages`, value: Math.min(progress.messages, progress.total), max: Math.max(progress.total, 1) };
    case "saving":
      return { text: `Saving the file: ${mb(progress.bytes)} MB`, value: null, max: 1 };
  }
}
