// The herdr-link MCP round trip, driven by the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.32.2): initialize, the dormant list,
// gateway activation, list_changed, the active list, peers (whose
// structuredContent the SDK validates against outputSchema), send, the
// receiver's reply with reply_to, close, errors and ping.
//
// usage: node conformance.mjs HERDR_LINK_BINARY HERDR_SIM_BINARY
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [herdrLink, herdrSim] = process.argv.slice(2);
if (!herdrLink || !herdrSim) {
  console.error("usage: node conformance.mjs HERDR_LINK_BINARY HERDR_SIM_BINARY");
  process.exit(2);
}

let failures = 0;
function check(name, ok, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok || !detail ? "" : ": " + detail}`);
  if (!ok) failures++;
}

const dir = mkdtempSync(join(tmpdir(), "hl-ts-"));
const socketPath = join(dir, "herdr.sock");
const sim = spawn(herdrSim, ["serve", "--socket", socketPath], { stdio: ["ignore", "pipe", "inherit"] });
await new Promise((resolve, reject) => {
  let buf = "";
  sim.stdout.on("data", (d) => {
    buf += d;
    if (buf.split("\n").length > 3) resolve();
  });
  sim.on("exit", (code) => reject(new Error(`herdr-sim exited ${code}`)));
  setTimeout(() => reject(new Error("herdr-sim did not start")), 5000);
});
const simEnv = { ...process.env, HERDR_ENV: "1", HERDR_SOCKET_PATH: socketPath, HERDR_LINK_LOG: "warn" };

async function connect(pane) {
  const client = new Client({ name: "ts-conformance", version: "1.0.0" });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { listChanged++; });
  const transport = new StdioClientTransport({ command: herdrLink, args: [], env: { ...simEnv, HERDR_PANE_ID: pane }, stderr: "inherit" });
  await client.connect(transport);
  return { client, listChanged: () => listChanged };
}
const names = (r) => r.tools.map((t) => t.name).join(",");
const text = (r) => r.content.find((c) => c.type === "text")?.text ?? "";
const paneText = (pane) => JSON.parse(execFileSync(herdrSim, ["pane", "read", pane], { env: simEnv })).result.read.text;
// What the agent in pane received, one text per user turn (herdr-sim turns).
const turns = (pane) => execFileSync(herdrSim, ["turns", pane], { env: simEnv }).toString().split("\n").filter(Boolean).map((l) => JSON.parse(l).text);
// Every herdr-link/1 envelope anywhere in s (glued text, pasted_content tags, drafts), as a receiver must find them.
const envelopes = (s) => {
  const found = [];
  const start = '{"protocol":"herdr-link/1"';
  for (let i = s.indexOf(start); i >= 0; i = s.indexOf(start, i + 1)) {
    for (let j = s.indexOf("}", i); j >= 0; j = s.indexOf("}", j + 1)) {
      try { found.push(JSON.parse(s.slice(i, j + 1))); break; } catch { /* not yet the end */ }
    }
  }
  return found;
};

try {
  const brain = await connect("w1:p1");
  const info = brain.client.getServerVersion();
  check("initialize: serverInfo.name is herdr-link", info?.name === "herdr-link", JSON.stringify(info));
  check("initialize: tools.listChanged advertised", brain.client.getServerCapabilities()?.tools?.listChanged === true);
  check("dormant tools/list is [herdr_link]", names(await brain.client.listTools()) === "herdr_link");

  const act = await brain.client.callTool({ name: "herdr_link", arguments: {} });
  check("gateway {} activates", !act.isError && act.structuredContent?.status === "active", text(act));
  await new Promise((r) => setTimeout(r, 100));
  check("exactly one notifications/tools/list_changed", brain.listChanged() === 1, `got ${brain.listChanged()}`);
  const active = await brain.client.listTools();
  check("active tools/list", names(active) === "herdr_link,herdr_link_peers,herdr_link_start,herdr_link_send,herdr_link_wait,herdr_link_close", names(active));
  check("every tool has a title and annotations", active.tools.every((t) => t.title && t.annotations && typeof t.annotations.readOnlyHint === "boolean"));

  const peers = await brain.client.callTool({ name: "herdr_link_peers", arguments: {} });
  check("peers (structuredContent validated by the SDK)", !peers.isError && peers.structuredContent?.self?.name === "brain"
    && peers.structuredContent.peers.some((p) => p.name === "reviewer") && !peers.structuredContent.peers.some((p) => p.name === "ops"), text(peers));

  const other = await brain.client.callTool({ name: "herdr_link_send", arguments: { to: "ops", message: "hi" } });
  check("send to another workspace is PEER_NOT_FOUND", other.isError && text(other).startsWith("PEER_NOT_FOUND:"), text(other));

  const sent = await brain.client.callTool({ name: "herdr_link_send", arguments: { to: "reviewer", message: "Please review." } });
  check("send", !sent.isError && sent.structuredContent?.status === "sent", text(sent));
  check("send to an idle agent is submitted", sent.structuredContent?.delivery === "submitted", JSON.stringify(sent.structuredContent));
  const got = turns("w1:p2").flatMap(envelopes);
  const env = got.find((e) => e.id === sent.structuredContent?.id);
  check("reviewer received the envelope in one turn, once", got.length === 1 && env?.from === "brain", JSON.stringify(got));

  const reviewer = await connect("w1:p2");
  const reply = await reviewer.client.callTool({ name: "herdr_link", arguments: { action: "send", arguments: { to: env.from, message: "LGTM", reply_to: env.id } } });
  check("reply through the gateway alone", !reply.isError, text(reply));
  // brain is working (a Claude Code agent): the reply waits in its queue
  // until the turn ends, and herdr-link says so.
  check("the reply to a working claude agent is queued", reply.structuredContent?.delivery === "queued", JSON.stringify(reply.structuredContent));
  await new Promise((r) => setTimeout(r, 700)); // Herdr's Enter comes 300 ms after the text
  check("brain's screen shows the reply queued, not yet a turn", paneText("w1:p1").includes("Queued") && turns("w1:p1").length === 0, paneText("w1:p1"));

  const blank = await brain.client.callTool({ name: "herdr_link_send", arguments: { to: "reviewer", message: "  " } });
  check("blank message is INVALID_ARGUMENT", blank.isError && text(blank).startsWith("INVALID_ARGUMENT:"), text(blank));
  let unknown = null;
  try { await brain.client.callTool({ name: "no_such_tool", arguments: {} }); } catch (e) { unknown = e; }
  check("unknown tool is a JSON-RPC error", unknown !== null && String(unknown).includes("-32602"), String(unknown));

  const closed = await brain.client.callTool({ name: "herdr_link_close", arguments: { agent: "reviewer" } });
  check("close", !closed.isError && closed.structuredContent?.status === "closed", text(closed));
  await brain.client.ping();
  check("ping", true);
  await reviewer.client.close();
  await brain.client.close();
} catch (e) {
  check("round trip", false, e?.stack ?? String(e));
} finally {
  sim.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? "ts-conformance: all checks passed" : `ts-conformance: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
