// The tree of 100,000 messages that the tree map's end-to-end test and its panning measurement
// (tests/perf/map-panning.mjs) open: a thread of 10,000 messages with 900 branches of 100
// hanging off it, every tenth branch a pin with its anchor, as an Open Loom v2 document for
// `pinloom import`.

export const SPINE = 10_000;
export const BRANCHES = 900;
export const BRANCH = 100;
const WORDS = "rivers carry silt past the bend where water slows and banks erode over centuries".split(" ");

export const text = (key, i) =>
  `${key}: ${Array.from({ length: 24 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ")}`;

/// The Open Loom v2 document of the tree, with Pinloom's own thread records for the pins. Each
/// branch is older than the thread's next message, so the import (which writes older children
/// first) writes the thread's last message last, and the tree opens on it.
export function hundredThousand() {
  const nodes = {};
  const edges = [];
  const threads = [];
  const start = Date.UTC(2026, 0, 1);
  const add = (id, key, i, parent, thread, second) => {
    nodes[id] = {
      id,
      content: [{ type: "text", text: text(key, i) }],
      author: { role: i % 2 ? "model" : "human" },
      createdAt: new Date(start + second * 1000).toISOString(),
    };
    if (thread) nodes[id].extensions = { pinloom: { thread } };
    if (parent) edges.push({ type: "continuation", sources: [{ nodeId: parent }], targetNodeId: id });
  };
  for (let i = 0; i < SPINE; i++) add(`m${i}`, `Message ${i}`, i, i > 0 ? `m${i - 1}` : null, null, i * 200);
  for (let b = 0; b < BRANCHES; b++) {
    const hang = Math.floor((b * SPINE) / BRANCHES);
    const pin = b % 10 === 0 ? `p${b}` : null;
    if (pin) {
      const anchorText = text(`Message ${hang}`, hang);
      const start = anchorText.indexOf(":") + 2;
      const passage = anchorText.slice(start, start + 30);
      threads.push({ id: pin, title: `Pin ${b}`, anchorNode: `m${hang}`, anchor: { start, end: start + passage.length, text: passage } });
    }
    let parent = `m${hang}`;
    for (let k = 0; k < BRANCH; k++) {
      const id = `b${b}_${k}`;
      add(id, `Branch ${b} message ${k}`, k, parent, pin, hang * 200 + 1 + k);
      parent = id;
    }
  }
  return {
    format: "open-loom",
    version: "2.0",
    trees: [
      {
        id: "big",
        title: "A hundred thousand",
        rootNodeIds: ["m0"],
        currentNodeId: `m${SPINE - 1}`,
        nodes,
        edges,
        extensions: { pinloom: { threads } },
      },
    ],
  };
}

