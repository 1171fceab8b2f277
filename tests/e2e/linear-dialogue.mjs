// A long linear conversation as an Open Loom v2 document, for `pinloom import`: what the start-up
// measurement opens and what the long-thread test scrolls through.

const WORDS = "rivers carry silt past the bend where water slows and banks erode over centuries".split(" ");

/// `count` messages, human and model in turn, each `Message <n>: ` and `wordsEach` words (long
/// enough to wrap), in one tree `title` whose current message is the last.
export function linearDialogue({ count, wordsEach = 60, id = "big", title = "Ten thousand" }) {
  const nodes = {};
  const edges = [];
  for (let i = 0; i < count; i++) {
    const text = `Message ${i}: ${Array.from({ length: wordsEach }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ")}`;
    nodes[`m${i}`] = { id: `m${i}`, content: [{ type: "text", text }], author: { role: i % 2 ? "model" : "human" } };
    if (i > 0) edges.push({ type: "continuation", sources: [{ nodeId: `m${i - 1}` }], targetNodeId: `m${i}` });
  }
  return { format: "open-loom", version: "2.0", trees: [{ id, title, rootNodeIds: ["m0"], currentNodeId: `m${count - 1}`, nodes, edges }] };
}
