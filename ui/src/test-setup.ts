// What jsdom lacks and every webview Pinloom runs in has. `matchMedia` answers as a window of the
// default size (1200×780) would: no media query of a narrow or short window matches.
if (typeof window.matchMedia !== "function") {
  window.matchMedia = (query: string): MediaQueryList =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => {},
      removeEventListener: () => {},
      addListener: () => {},
      removeListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList;
}

// Svelte measures elements (`bind:clientWidth`) with a ResizeObserver; jsdom lays nothing out,
// so an observer that never reports leaves every measured width at 0, as before layout.
if (typeof globalThis.ResizeObserver !== "function") {
  globalThis.ResizeObserver = class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  } as unknown as typeof ResizeObserver;
}
