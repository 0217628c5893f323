// The herdr-link MCP round trip, driven by the official TypeScript SDK
// client (@modelcontextprotocol/sdk 1.32.2): initialize, the dormant list,
// gateway activation, list_changed, the active list, peers (whose
// structuredContent the SDK validates against outputSchema), send, the
// receiver's reply with reply_to, close, errors and ping; then requests
// with a reference-style peer (one that types herdr-link/1 envelopes
// through Herdr and records nothing): its reply arrives intact and the
// request ends handled with one notice, and herdr-link's reply to a
// reference-style sender is a plain herdr-link/1 envelope.
//
// usage: node conformance.mjs HERDR_LINK_BINARY HERDR_SIM_BINARY
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
// startSim runs herdr-sim serve on a socket of its own (extra: more flags).
async function startSim(socketPath, extra = []) {
  const sim = spawn(herdrSim, ["serve", "--socket", socketPath, ...extra], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    let buf = "";
    sim.stdout.on("data", (d) => {
      buf += d;
      if (buf.split("\n").length > 3) resolve();
    });
    sim.on("exit", (code) => reject(new Error(`herdr-sim exited ${code}`)));
    setTimeout(() => reject(new Error("herdr-sim did not start")), 5000);
  });
  return sim;
}
const socketPath = join(dir, "herdr.sock");
const sim = await startSim(socketPath);
const simEnv = { ...process.env, HERDR_ENV: "1", HERDR_SOCKET_PATH: socketPath, HERDR_LINK_LOG: "warn" };

async function connect(pane, env = simEnv) {
  const client = new Client({ name: "ts-conformance", version: "1.0.0" });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { listChanged++; });
  const transport = new StdioClientTransport({ command: herdrLink, args: [], env: { ...env, HERDR_PANE_ID: pane }, stderr: "inherit" });
  await client.connect(transport);
  return { client, listChanged: () => listChanged };
}
const names = (r) => r.tools.map((t) => t.name).join(",");
const text = (r) => r.content.find((c) => c.type === "text")?.text ?? "";
const paneText = (pane) => JSON.parse(execFileSync(herdrSim, ["pane", "read", pane], { env: simEnv })).result.read.text;
// What the agent in pane received, one text per user turn (herdr-sim turns).
const turns = (pane, env = simEnv) => execFileSync(herdrSim, ["turns", pane], { env }).toString().split("\n").filter(Boolean).map((l) => JSON.parse(l).text);
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

// The reference's wrapper (0.2.0): prose, a blank line, the envelope as
// the final line, no line break after it.
const referenceWrapper = (env) => `[herdr-link/1] inter-agent message delivered through the herdr_link gateway.\nFrom: ${env.from}\nMessage id: ${env.id}\n\nThe JSON object below is the complete herdr-link/1 envelope; the text around it is delivery metadata and is not part of the message.\n\n` + JSON.stringify(env);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// poll calls f every 100 ms until it returns something truthy, at most ms.
const poll = async (f, ms) => {
  for (const end = Date.now() + ms; ; await sleep(100)) {
    const v = f();
    if (v || Date.now() > end) return v;
  }
};
let refSim = null;

// Requests with reference-style peers, on a simulator of their own whose
// agents' turns end by themselves: refpeer and refsender run no herdr-link
// here; what they send is typed through Herdr (herdr-sim agent prompt), as
// the reference does.
async function referencePeers() {
  const world = { workspaces: [{ id: "w1", tabs: [{ id: "w1:t1", panes: [
    { id: "w1:p1", agent: { kind: "claude", name: "brain", status: "idle", turn_ms: 300 } },
    { id: "w1:p2", agent: { kind: "claude", name: "refpeer", status: "idle", turn_ms: 300 } },
    { id: "w1:p3", agent: { kind: "claude", name: "refsender", status: "idle", turn_ms: 300 } },
  ] }] }] };
  const worldFile = join(dir, "ref-world.json");
  writeFileSync(worldFile, JSON.stringify(world));
  const refSocket = join(dir, "ref.sock");
  refSim = await startSim(refSocket, ["--world", worldFile]);
  const env = { ...simEnv, HERDR_SOCKET_PATH: refSocket };
  const split = (texts) => {
    const all = texts.flatMap(envelopes);
    return { envs: all.filter((e) => !("notice" in e)), notices: all.filter((e) => "notice" in e) };
  };
  const brain = await connect("w1:p1", env);
  const req = await brain.client.callTool({ name: "herdr_link_send", arguments: { to: "refpeer", message: "What is 2+2?" } });
  check("request to a reference-style peer", !req.isError && req.structuredContent?.delivery === "submitted", text(req));
  const id = req.structuredContent?.id;
  const got = await poll(() => split(turns("w1:p2", env)).envs.find((e) => e.id === id), 5000);
  check("the reference-style peer received the request", got?.from === "brain" && got?.to === "refpeer" && !("reply_to" in got), JSON.stringify(got));
  // refpeer answers as the reference does: its envelope, typed into brain.
  const answer = { protocol: "herdr-link/1", id: "hl_" + Date.now().toString(36) + "_ref00001", from: "refpeer", to: "brain", reply_to: id, message: "4, says the reference" };
  execFileSync(herdrSim, ["agent", "prompt", "brain", referenceWrapper(answer)], { env });
  const wait = await brain.client.callTool({ name: "herdr_link_wait", arguments: { id, timeout_s: 20 } });
  check("the request ends handled: the reference's reply went around herdr-link", !wait.isError && wait.structuredContent?.state === "handled" && wait.structuredContent?.peer === "refpeer", text(wait));
  const notice = await poll(() => split(turns("w1:p1", env)).notices.length > 0, 5000);
  await sleep(1000); // nothing more arrives
  const brainTurns = split(turns("w1:p1", env));
  const replies = brainTurns.envs.filter((e) => e.reply_to === id);
  check("brain's turns hold the reference's reply intact, once", replies.length === 1 && JSON.stringify(replies[0]) === JSON.stringify(answer), JSON.stringify(brainTurns.envs));
  check("one notice, handled, about the request", notice && brainTurns.notices.length === 1 && brainTurns.notices[0].notice === "handled"
    && brainTurns.notices[0].about === id && brainTurns.notices[0].peer === "refpeer" && Object.keys(brainTurns.notices[0]).join(",") === "protocol,notice,about,peer", JSON.stringify(brainTurns.notices));

  // A reference-style sender's request, and herdr-link's reply to it.
  const refReq = { protocol: "herdr-link/1", id: "hl_" + Date.now().toString(36) + "_ref00002", from: "refsender", to: "brain", message: "Are you there?" };
  await poll(() => JSON.parse(execFileSync(herdrSim, ["agent", "get", "brain"], { env })).result.agent.agent_status !== "working", 5000);
  execFileSync(herdrSim, ["agent", "prompt", "brain", referenceWrapper(refReq)], { env });
  const rep = await brain.client.callTool({ name: "herdr_link_send", arguments: { to: "refsender", message: "Yes.", reply_to: refReq.id } });
  check("reply to a reference-style sender", !rep.isError && rep.structuredContent?.status === "sent", text(rep));
  const sentBack = await poll(() => split(turns("w1:p3", env)).envs.find((e) => e.reply_to === refReq.id), 5000);
  check("the reply is a plain herdr-link/1 envelope", sentBack && Object.keys(sentBack).join(",") === "protocol,id,from,to,reply_to,message"
    && sentBack.protocol === "herdr-link/1" && /^hl_[a-z0-9]+_[a-z0-9]+$/.test(sentBack.id) && sentBack.from === "brain" && sentBack.to === "refsender" && sentBack.message === "Yes.", JSON.stringify(sentBack));
  const noWait = await brain.client.callTool({ name: "herdr_link_wait", arguments: { id: rep.structuredContent?.id, timeout_s: 0 } });
  check("a reply is not a request: nothing to wait for", noWait.isError && text(noWait).startsWith("INVALID_ARGUMENT:"), text(noWait));
  await brain.client.close();
}

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
  const reply = await reviewer.client.callTool({ name: "herdr_link", arguments: { action: "send", arguments: { to: env.from, message: "LGTM", reply_to: env.id, when: "now" } } });
  check("reply through the gateway alone", !reply.isError, text(reply));
  // brain is working (a Claude Code agent): with when "now" the reply
  // waits in its queue until the turn ends, and herdr-link says so.
  check("the reply to a working claude agent is queued (when now)", reply.structuredContent?.delivery === "queued", JSON.stringify(reply.structuredContent?.delivery));
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
  await referencePeers();
} catch (e) {
  check("round trip", false, e?.stack ?? String(e));
} finally {
  sim.kill("SIGTERM");
  refSim?.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? "ts-conformance: all checks passed" : `ts-conformance: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
