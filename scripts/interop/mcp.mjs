// Interoperability of mira-mcp with a client the project did not write:
// the official TypeScript MCP SDK. Over stdio and over Streamable HTTP it
// lists the tools, remembers, recalls, reads the memory as a resource,
// plans a context, has a secret refused, asks the code tools about a small
// project and forgets, printing one line per check. It exits 1 if any check fails.
//
//   node scripts/interop/mcp.mjs
//
// MIRA_INTEROP_MODULES is the node_modules directory holding
// @modelcontextprotocol/sdk (scripts/interop.sh installs it outside the
// repository); MIRA_MCP is the server binary (default bin/mira-mcp).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = process.env.MIRA_MCP || join(root, "bin/mira-mcp");
const modules = process.env.MIRA_INTEROP_MODULES;
if (!modules) {
	console.error("mcp.mjs: set MIRA_INTEROP_MODULES to the node_modules holding @modelcontextprotocol/sdk");
	process.exit(2);
}

// ES modules do not read NODE_PATH, and a bare import resolves from this
// file's directory, not from the cache. So resolve a subpath of the SDK by
// its own package.json export map ("import" condition) and import the file.
const sdkDir = join(modules, "@modelcontextprotocol/sdk");
const sdkPkg = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
async function sdk(sub) {
	let target = sdkPkg.exports?.["./" + sub]?.import;
	if (!target) {
		const star = sdkPkg.exports?.["./*"]?.import;
		if (!star) throw new Error(`@modelcontextprotocol/sdk@${sdkPkg.version} exports no ${sub}`);
		target = star.replace("*", sub);
	}
	return import(pathToFileURL(join(sdkDir, target)).href);
}
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const TOOLS = ["code_map", "code_search", "code_symbol", "context", "forget", "list", "pin", "recall", "remember"];
const TEXT = "We chose PostgreSQL for the shop database because of JSONB";
const SECRET = "deploy key AKIAZ7QW3ERTYUIOP4AB for prod";

let failures = 0;
function check(transport, what, ok, detail) {
	console.log(`${ok ? "ok  " : "FAIL"} ${transport}: ${what}${!ok && detail !== undefined ? ` (${detail})` : ""}`);
	if (!ok) failures++;
	return ok;
}
const show = (v) => JSON.stringify(v)?.slice(0, 400);
const textOf = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// A fresh store with no config of the user's and no global git config,
// in a small Go project for the code tools (their index goes under HOME).
function freshStore() {
	const dir = mkdtempSync(join(tmpdir(), "mira-interop-"));
	writeFileSync(join(dir, "none.yaml"), "");
	writeFileSync(join(dir, "go.mod"), "module example.com/shop\n");
	mkdirSync(join(dir, "billing"));
	writeFileSync(join(dir, "billing", "export.go"), "package billing\n\n// ExportInvoices writes the invoices as CSV.\nfunc ExportInvoices() error {\n\treturn nil\n}\n");
	writeFileSync(join(dir, "main.go"), "package main\n\nimport \"example.com/shop/billing\"\n\nfunc main() { billing.ExportInvoices() }\n");
	return {
		dir,
		env: {
			HOME: dir,
			MIRA_HOME: join(dir, "home"),
			MIRA_CONFIG: join(dir, "none.yaml"),
			XDG_CONFIG_HOME: join(dir, "cfg"),
			MIRA_PROJECT: "",
			GIT_CONFIG_NOSYSTEM: "1",
			GIT_CONFIG_GLOBAL: "/dev/null",
		},
	};
}

// The round trip every transport must make.
async function scenario(t, client) {
	const server = client.getServerVersion();
	const proto = client.transport?.protocolVersion;
	check(t, `initialize: server ${server?.name} ${server?.version ?? ""}${proto ? ", protocol " + proto : ""}`, server?.name === "mira", show(server));
	check(t, "initialize: the server gives instructions", /Mira/.test(client.getInstructions() ?? ""), client.getInstructions());

	const { tools } = await client.listTools();
	const names = tools.map((x) => x.name).sort();
	check(t, `tools/list has ${TOOLS.join(", ")}`, JSON.stringify(names) === JSON.stringify(TOOLS), names.join(","));
	const recall = tools.find((x) => x.name === "recall");
	check(t, "recall is annotated readOnlyHint", recall?.annotations?.readOnlyHint === true, show(recall?.annotations));
	const forget = tools.find((x) => x.name === "forget");
	check(t, "forget is annotated destructiveHint", forget?.annotations?.destructiveHint === true, show(forget?.annotations));
	check(t, "every tool has a description and an object input schema",
		tools.every((x) => x.description && x.inputSchema?.type === "object"),
		show(tools.filter((x) => !x.description || x.inputSchema?.type !== "object").map((x) => x.name)));

	// remember: callTool validates structuredContent against the tool's
	// outputSchema, so a result that does not match it throws here.
	const rem = await client.callTool({ name: "remember", arguments: { text: TEXT, kind: "decision", tags: ["db"] } });
	const m = rem.structuredContent?.memories?.[0];
	if (!check(t, "remember a decision with a tag", !rem.isError && m?.kind === "decision" && m?.tags?.includes("db") && typeof m?.id === "string",
		rem.isError ? textOf(rem) : show(rem.structuredContent))) {
		return;
	}
	const id = m.id;
	check(t, `remember's text names the id ${id}`, textOf(rem).includes(id), textOf(rem));

	const rec = await client.callTool({ name: "recall", arguments: { query: "PostgreSQL JSONB shop database", k: 5 } });
	const found = rec.structuredContent?.memories ?? [];
	check(t, "recall finds it by id in structuredContent", !rec.isError && found.some((x) => x.id === id && x.text === TEXT), show(rec.structuredContent));

	const uri = `mira://memory/${id}`;
	check(t, `recall gives its resource uri ${uri}`, found.find((x) => x.id === id)?.uri === uri, show(found[0]));
	const rr = await client.readResource({ uri });
	const c = rr.contents?.[0];
	check(t, `resources/read ${uri} returns the Markdown file`,
		rr.contents?.length === 1 && c.uri === uri && c.mimeType === "text/markdown" && c.text?.includes(`id: ${id}`) && c.text?.includes(TEXT),
		show(rr.contents));
	const { resourceTemplates } = await client.listResourceTemplates();
	check(t, "resources/templates/list has mira://memory/{id}", resourceTemplates.some((x) => x.uriTemplate === "mira://memory/{id}"), show(resourceTemplates));
	try {
		await client.readResource({ uri: "mira://memory/01NOSUCHMEMORY0000000000000" });
		check(t, "resources/read of an unknown memory is an error", false, "it succeeded");
	} catch (e) {
		// -32602 (invalid params) since SEP-2164; specs up to 2025-11-25
		// suggested -32002. Either is a not-found a client can act on.
		check(t, `resources/read of an unknown memory is a not-found error (code ${e.code})`, e.code === -32602 || e.code === -32002, e.message);
	}

	const cx = await client.callTool({ name: "context", arguments: { query: "PostgreSQL JSONB", budget: 2000 } });
	const sc = cx.structuredContent ?? {};
	check(t, "context contains the text, within its budget",
		!cx.isError && sc.prompt?.includes("PostgreSQL") && textOf(cx).includes("PostgreSQL") && sc.budget === 2000 && sc.tokens <= sc.budget && !!sc.plan_id,
		cx.isError ? textOf(cx) : show(sc));

	const sec = await client.callTool({ name: "remember", arguments: { text: SECRET } });
	check(t, "a secret comes back as isError", sec.isError === true && /secret/i.test(textOf(sec)), `isError ${sec.isError}: ${textOf(sec)}`);
	const lst = await client.callTool({ name: "list", arguments: { limit: 50 } });
	check(t, "the secret was not stored", !lst.isError && !JSON.stringify(lst.structuredContent ?? {}).includes("AKIAZ7QW3ERTYUIOP4AB"), show(lst.structuredContent));

	const bad = await client.callTool({ name: "remember", arguments: { text: "x", kind: "banana" } }).catch((e) => ({ thrown: e }));
	check(t, "an argument outside the schema (kind banana) is refused naming kind",
		bad.thrown ? /kind/.test(bad.thrown.message) : bad.isError === true && /kind/.test(textOf(bad)),
		bad.thrown ? bad.thrown.message : textOf(bad));

	// The code tools: callTool checks each structuredContent against the
	// tool's outputSchema too.
	const cs = await client.callTool({ name: "code_search", arguments: { query: "export invoices", k: 3, excerpts: true } });
	const tp = cs.structuredContent?.touchpoints?.[0];
	check(t, "code_search finds the definition, with its excerpt",
		!cs.isError && tp?.name === "ExportInvoices" && tp?.path === "billing/export.go" && tp?.excerpt?.includes("return nil"),
		cs.isError ? textOf(cs) : show(cs.structuredContent));
	const sy = await client.callTool({ name: "code_symbol", arguments: { ref: "ExportInvoices", show: "callers" } });
	check(t, "code_symbol gives its caller", !sy.isError && sy.structuredContent?.calls?.[0]?.from?.name === "main",
		sy.isError ? textOf(sy) : show(sy.structuredContent));
	const cm = await client.callTool({ name: "code_map", arguments: { budget: 300 } });
	check(t, "code_map gives the module tree within its budget",
		!cm.isError && cm.structuredContent?.text?.includes("billing/") && cm.structuredContent?.tokens <= 300,
		cm.isError ? textOf(cm) : show(cm.structuredContent));

	// The index code_map built is in the context of a query now.
	const cc = await client.callTool({ name: "context", arguments: { query: "export invoices", files: ["billing/export.go"] } });
	check(t, "context takes the code map and the query's code cards",
		!cc.isError && cc.structuredContent?.prompt?.includes("## Code map") && cc.structuredContent?.prompt?.includes("ExportInvoices"),
		cc.isError ? textOf(cc) : show(cc.structuredContent));

	const fg = await client.callTool({ name: "forget", arguments: { ids: [id], reason: "interop test" } });
	check(t, "forget it", !fg.isError && fg.structuredContent?.forgotten?.[0]?.id === id, fg.isError ? textOf(fg) : show(fg.structuredContent));
	const after = await client.callTool({ name: "recall", arguments: { query: "PostgreSQL JSONB shop database", k: 5 } });
	check(t, "recall no longer finds it", !after.isError && !(after.structuredContent?.memories ?? []).some((x) => x.id === id), show(after.structuredContent));
}

async function run(t, fn) {
	const store = freshStore();
	try {
		await fn(store);
	} catch (e) {
		check(t, "the session ran to its end", false, e?.stack ?? String(e));
	} finally {
		rmSync(store.dir, { recursive: true, force: true });
	}
}

const clientInfo = { name: "mira-interop", version: sdkPkg.version };
console.log(`# @modelcontextprotocol/sdk ${sdkPkg.version}, node ${process.version}, server ${bin}`);

await run("stdio", async (store) => {
	const transport = new StdioClientTransport({ command: bin, args: [], env: store.env, cwd: store.dir, stderr: "pipe" });
	let stderr = "";
	transport.stderr?.on("data", (d) => (stderr += d));
	const client = new Client(clientInfo);
	try {
		await client.connect(transport);
		await scenario("stdio", client);
	} finally {
		await client.close();
		if (failures && stderr) console.log(`# mira-mcp stderr:\n${stderr}`);
	}
});

await run("http", async (store) => {
	const proc = spawn(bin, ["--http", "127.0.0.1:0", "-v"], {
		env: { PATH: process.env.PATH, ...store.env },
		cwd: store.dir,
		stdio: ["ignore", "ignore", "pipe"],
	});
	let stderr = "";
	const exited = new Promise((res) => proc.on("exit", (code, sig) => res(sig ?? code)));
	const endpoint = await new Promise((res, rej) => {
		const timer = setTimeout(() => rej(new Error(`no "serving MCP on" line in 60 s:\n${stderr}`)), 60000);
		proc.stderr.on("data", (d) => {
			stderr += d;
			const m = /serving MCP on (http:\/\/\S+)/.exec(stderr);
			if (m) {
				clearTimeout(timer);
				res(m[1]);
			}
		});
		exited.then((how) => {
			clearTimeout(timer);
			rej(new Error(`mira-mcp --http exited (${how}) before it served:\n${stderr}`));
		});
	});
	check("http", `server listening at ${endpoint}`, true);
	const client = new Client(clientInfo);
	const transport = new StreamableHTTPClientTransport(new URL(endpoint));
	try {
		await client.connect(transport);
		check("http", `session ${transport.sessionId ? "id " + transport.sessionId : "without an id"}`, true);
		await scenario("http", client);
		// DELETE the session (the spec's way to end one), then close.
		await transport.terminateSession();
		check("http", "DELETE ends the session", transport.sessionId === undefined, transport.sessionId);
	} finally {
		await client.close();
		proc.kill("SIGINT");
		const how = await Promise.race([exited, new Promise((res) => setTimeout(() => res("timeout"), 15000))]);
		if (how === "timeout") proc.kill("SIGKILL");
		check("http", `server stops on SIGINT (exit ${how})`, how === 0, stderr);
	}
});

console.log(failures ? `interop: ${failures} check(s) failed` : "interop: all checks passed");
process.exit(failures ? 1 : 0);
