// Drives bin/mira-proxy with the official openai npm package, plain and
// streamed, in front of a fake upstream served here: the second call of a
// conversation must carry the first one's memory to the upstream, and the
// streamed answer must arrive whole.
import http from "node:http";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const { default: OpenAI } = await import(path.join(process.env.MIRA_INTEROP_MODULES, "openai", "index.mjs"));

const seen = [];
const upstream = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const r = JSON.parse(body);
    seen.push(r);
    const last = r.messages.filter((m) => m.role === "user").at(-1).content;
    const text = "re: " + last;
    if (r.stream) {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      for (const piece of [text.slice(0, 3), text.slice(3)]) {
        res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
      res.end("data: [DONE]\n\n");
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
  });
});
await new Promise((ok) => upstream.listen(0, "127.0.0.1", ok));
const upURL = `http://127.0.0.1:${upstream.address().port}/v1`;

const dir = mkdtempSync(path.join(tmpdir(), "mira-interop-proxy-"));
writeFileSync(path.join(dir, "none.yaml"), "");
const env = { ...process.env, MIRA_HOME: path.join(dir, "home"), MIRA_CONFIG: path.join(dir, "none.yaml"), MIRA_MODEL: "", OPENAI_BASE_URL: "", OPENAI_API_KEY: "" };
const proxy = spawn(process.env.MIRA_PROXY, ["--listen", "127.0.0.1:0", "--upstream", upURL, "--no-extract", "--summarizer", "extractive", "--commit-delay", "50ms"], { env, stdio: ["ignore", "ignore", "pipe"] });
const base = await new Promise((ok, fail) => {
  let err = "";
  proxy.stderr.on("data", (c) => {
    err += c;
    const m = err.match(/serving (http:\/\/\S+\/v1)/);
    if (m) ok(m[1]);
  });
  proxy.on("exit", () => fail(new Error("mira-proxy exited:\n" + err)));
});

let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok" : "FAIL"}: ${what}`);
  if (!ok) failed++;
};
const client = new OpenAI({ baseURL: base, apiKey: "unused", defaultHeaders: { "X-Mira-Conversation": "interop" } });

// A pinned preference in the store, which every call's block must carry.
const remember = spawn(path.join(path.dirname(process.env.MIRA_PROXY), "mira-remember"), ["--kind", "preference", "--pin", "sticky", "The user prefers answers in British English"], { env, stdio: "ignore" });
await new Promise((ok) => remember.on("exit", ok));

const plain = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello proxy" }] });
check(plain.choices[0].message.content === "re: hello proxy", "plain answer through the proxy");
check(plain.usage?.total_tokens === 5, "usage passes through");
check(seen.at(-1).messages.some((m) => m.role === "system" && m.content.includes("British English")), "memory injected before the call");

const stream = await client.chat.completions.create({ model: "m", stream: true, messages: [{ role: "user", content: "hello proxy" }, { role: "assistant", content: "re: hello proxy" }, { role: "user", content: "stream please" }] });
let text = "";
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
check(text === "re: stream please", `streamed answer whole (${JSON.stringify(text)})`);
const last = seen.at(-1).messages;
check(last.at(-2).role === "system" && last.at(-1).content === "stream please", "the block sits just before the last user message");

const { data, response } = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "plan?" }] }).withResponse();
check(/^[0-9a-f]+/.test(response.headers.get("x-mira-plan") ?? ""), "X-Mira-Plan header");

proxy.kill("SIGTERM");
const code = await new Promise((ok) => proxy.on("exit", (c) => ok(c)));
check(code === 0, "SIGTERM: exit 0");
upstream.close();
if (failed) process.exit(1);
