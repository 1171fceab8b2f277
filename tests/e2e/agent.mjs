// An agent for the end-to-end tests: `pinloom mcp` (the command-line program's ThreadMind-
// compatible MCP server) on the app's own database, run from a working folder as a coding agent
// runs it, spoken to in JSON-RPC over its standard input and output.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

import { cliBinary } from "./harness.mjs";

export class Agent {
  #next = 1;
  #waiting = new Map();
  #said = "";

  /// Starts the server on `database`, in `folder`.
  constructor(database, folder) {
    this.process = spawn(cliBinary(), ["--db", database, "mcp"], { cwd: folder, stdio: ["pipe", "pipe", "pipe"] });
    this.process.stderr.on("data", (chunk) => (this.#said += chunk));
    createInterface({ input: this.process.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      const waiting = this.#waiting.get(message.id);
      if (!waiting) return;
      this.#waiting.delete(message.id);
      waiting(message);
    });
  }

  /// The MCP handshake.
  async start() {
    await this.#request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "pinloom-e2e", version: "0" },
    });
    this.process.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }

  /// Calls tool `name` and returns the text it answered; a tool error throws with it.
  async call(name, args) {
    const answer = await this.#request("tools/call", { name, arguments: args });
    if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
    const text = answer.result.content.map((part) => part.text).join("");
    if (answer.result.isError) throw new Error(`${name}: ${text}`);
    return text;
  }

  stop() {
    this.process.kill();
  }

  #request(method, params) {
    const id = this.#next++;
    return new Promise((resolveAnswer, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new Error(`pinloom mcp did not answer ${method} within 20 s: ${this.#said}`));
      }, 20_000);
      this.#waiting.set(id, (message) => {
        clearTimeout(timer);
        resolveAnswer(message);
      });
      this.process.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }
}
