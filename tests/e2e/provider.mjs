// A model provider for the end-to-end tests: an HTTP server on 127.0.0.1 that speaks the
// OpenAI-compatible chat stream (server-sent events, as vLLM and llama.cpp send it), records every
// request, and answers with the next scripted text.
import { createServer } from "node:http";

function frame(json) {
  return `data: ${JSON.stringify(json)}\n\n`;
}

/// The stream that says `text` in a few pieces, then stops with usage.
export function chatStream(text) {
  const base = { id: "chatcmpl-e2e", object: "chat.completion.chunk", created: 1, model: "local-model" };
  const pieces = text.match(/[\s\S]{1,24}/g) ?? [""];
  let out = frame({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
  for (const piece of pieces) {
    out += frame({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  out += frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  out += frame({ ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: pieces.length, total_tokens: 50 + pieces.length } });
  return out + "data: [DONE]\n\n";
}

/// The stream of the completion endpoint (buffer mode continues a document through it) that
/// continues with `text` in a few pieces.
export function completionStream(text) {
  const base = { id: "cmpl-e2e", object: "text_completion", created: 1, model: "local-model" };
  const pieces = text.match(/[\s\S]{1,24}/g) ?? [""];
  let out = "";
  for (const piece of pieces) out += frame({ ...base, choices: [{ index: 0, text: piece, finish_reason: null }] });
  out += frame({ ...base, choices: [{ index: 0, text: "", finish_reason: "stop" }] });
  return out + "data: [DONE]\n\n";
}

/// A completion stream of `tokens`, each `[text, logprob, { alternative: logprob, … }]`, with
/// their log-probabilities in the completions endpoint's own shape, a token a frame, as
/// llama-cpp-python's server sends them.
export function completionStreamWithTokens(tokens) {
  const base = { id: "cmpl-e2e", object: "text_completion", created: 1, model: "local-model" };
  let out = "";
  for (const [text, logprob, top] of tokens) {
    const logprobs = { tokens: [text], token_logprobs: [logprob], top_logprobs: [top] };
    out += frame({ ...base, choices: [{ index: 0, text, logprobs, finish_reason: null }] });
  }
  out += frame({ ...base, choices: [{ index: 0, text: "", logprobs: null, finish_reason: "stop" }] });
  return out + "data: [DONE]\n\n";
}

export class ScriptedProvider {
  requests = [];
  /// The addresses the window looked at (GET), apart from the requests it sent.
  looks = [];
  /// Texts to answer with, in order; `{ partial: text }` sends the start of a reply and holds on;
  /// `{ status, headers, body }` answers with that HTTP error instead of a stream (`release`
  /// finishes what is held); `{ tokens }`
  /// continues a document with those tokens and their log-probabilities
  /// (`completionStreamWithTokens`).
  answers = [];
  held = [];

  async start() {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        // A look at the server (the window asks which models it offers before a first send)
        // is answered as llama.cpp's server answers it, and takes no scripted answer.
        if (request.method === "GET") {
          this.looks.push(request.url);
          const known = {
            "/v1/models": { object: "list", data: [{ id: "local-model", object: "model", meta: { n_ctx_train: 32768 } }] },
            "/props": { default_generation_settings: { n_ctx: 8192 } },
          }[request.url];
          response.writeHead(known ? 200 : 404, { "content-type": "application/json" });
          response.end(JSON.stringify(known ?? { error: { message: "not found" } }));
          return;
        }
        this.requests.push({ method: request.method, url: request.url, body });
        const answer = this.answers.shift() ?? "(the test provider has no more answers)";
        if (typeof answer === "object" && "status" in answer) {
          response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
          response.end(JSON.stringify(answer.body));
          return;
        }
        response.writeHead(200, { "content-type": "text/event-stream", connection: "close" });
        if (typeof answer === "object" && "partial" in answer) {
          // The start of a reply, then silence with the connection held open: a model that is
          // still "thinking" when the app is killed.
          const stream = chatStream(answer.partial);
          const start = stream.slice(0, stream.indexOf('"finish_reason":"stop"')).replace(/data: [^\n]*$/, "");
          response.write(start);
          this.held.push({ response, rest: stream.slice(start.length) });
          return;
        }
        const completion = request.url.endsWith("/completions") && !request.url.endsWith("/chat/completions");
        if (typeof answer === "object" && "tokens" in answer) {
          response.end(completionStreamWithTokens(answer.tokens));
          return;
        }
        response.end(completion ? completionStream(answer) : chatStream(answer));
      });
    });
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${this.server.address().port}/v1`;
  }

  /// The chat messages of request `index` as "role: content" lines.
  messages(index) {
    const body = JSON.parse(this.requests[index].body);
    return body.messages.map((message) => `${message.role}: ${message.content}`);
  }

  /// Finishes the replies held open: the rest of each stream, and the end.
  release() {
    for (const { response, rest } of this.held.splice(0)) response.end(rest);
  }

  async stop() {
    for (const { response } of this.held) response.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
