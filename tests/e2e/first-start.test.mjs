// A first start in the real window, with llama.cpp's server (scripted on 127.0.0.1, answering
// its model list and properties as the real one does) where the app is told to look: before the
// first send the window says which models can answer, offers the server's model, and the model
// used with one click answers the first message.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { Harness, withProviderAndWindow } from "./harness.mjs";
import { ScriptedProvider } from "./provider.mjs";

describe("a first start in the real window", () => {
  const harness = new Harness();
  const llama = new ScriptedProvider();
  harness.localServers = () => `llamacpp=${llama.base}`;
  withProviderAndWindow(harness, llama);

  harness.windowTest("before the first send, the window offers the local server's model, and it answers", async () => {
    await harness.newTree("First start");
    await harness.find("models-ready");
    const [found] = await harness.textsWhen("found-model", 1, 20_000);
    assert.match(found, /local-model/);
    assert.match(found, new RegExp(`on llama\\.cpp server at ${llama.base.replaceAll(".", "\\.")}`));
    assert.deepEqual(
      llama.looks.filter((url) => url === "/v1/models" || url === "/props").sort(),
      ["/props", "/v1/models", "/v1/models"],
      "the server was looked at, then asked for its models and its window",
    );
    assert.equal(llama.requests.length, 0, "nothing was sent");
    await harness.screen("first-start");

    await harness.click("found-model-use");
    const picker = await harness.find("model-picker");
    await harness.driver.wait(async () => (await picker.getAttribute("value")) === "local-model (llama.cpp server)", 10_000, "the model is chosen");
    await harness.textsUntil("models-ready-list", (texts) => texts[0]?.includes("local-model (llama.cpp server)"), "it can answer now", 20_000);
    assert.equal((await harness.findAll("found-model")).length, 0, "a model in use is no longer offered");

    llama.answers.push("Hello from llama.cpp.");
    await harness.type("composer-input", "Hello?");
    await harness.click("composer-ask");
    await harness.textsUntil("message-text", (texts) => texts.at(-1) === "Hello from llama.cpp.", "the first answer", 20_000);
    const request = JSON.parse(llama.requests[0].body);
    assert.equal(request.model, "local-model");
    assert.ok(llama.requests[0].url.endsWith("/v1/chat/completions"), llama.requests[0].url);
  });
});
