// What several owners' tests start from: one tree of two messages, model profiles, and a map.
import type { Message, ModelProfile, TreeMapView } from "./bindings";
import { installFakeBackend, treeSummary, type FakeState } from "./fake-backend";

export const RIVERS = treeSummary(1, "rivers", "Rivers");

export const RIVERS_MESSAGES: Message[] = [
  { id: 10, parentId: null, author: "human", writtenBy: null, text: "Why do rivers bend?", createdAtMs: 0, tokenEstimate: 6 },
  { id: 11, parentId: 10, author: "model", writtenBy: null, text: "Erosion on the outer bank.", createdAtMs: 0, tokenEstimate: 7 },
];

/// A profile named `name`; `importedFrom` names the file it came with, if any.
export function profile(name: string, extra: Partial<ModelProfile> = {}): ModelProfile {
  return {
    name,
    provider: "vllm",
    modelId: "m",
    baseUrl: null,
    contextWindow: 8192,
    reserve: 1024,
    nativeSystem: true,
    completionEndpoint: false,
    tokenizer: "o200k",
    agentSystemPrompt: "",
    importedFrom: null,
    ...extra,
  };
}

/// The fake backend holding Rivers and its two messages, and whatever `extra` adds. The messages
/// are copied so that what one test does to them does not reach the next.
export function installRiversBackend(extra: Partial<FakeState> = {}): FakeState {
  return installFakeBackend({ trees: [RIVERS], messages: new Map([[1, structuredClone(RIVERS_MESSAGES)]]), ...extra });
}

/// The backend's placing (window/map.rs) of: 1 ─ 2 ─ 4 ─ 6 in the root thread, 3 a second reply
/// to 1, 5 the first message of pin 9 opened on 4 and 7 after it.
///   lane 0: 1 2 4 6     (depths 0..3)
///   lane 1:   3   5 7   (3 at depth 1; 5, 7 at depths 3, 4)
export const MAP_WITH_BRANCH_AND_PIN: TreeMapView = {
  ids: [1, 2, 4, 6, 5, 7, 3],
  authors: "hmhmhmh",
  runs: [
    { first: 0, len: 4, lane: 0, depth: 0, from: null, pinId: null },
    { first: 4, len: 2, lane: 1, depth: 3, from: 2, pinId: 9 },
    { first: 6, len: 1, lane: 1, depth: 1, from: 0, pinId: null },
  ],
  pins: [{ id: 9, title: "Oxbows", anchor: "oxbow lakes", closed: false }],
  lanes: 2,
  depths: 5,
};
