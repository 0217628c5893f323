// Drives adapters/pi/herdr-link.ts with a stand-in for Pi's ExtensionAPI
// (Node 22.6+ strips the types) and prints what happened as one JSON line.
// Run by adapter_test.go with HERDR_* pointing at a simulated Herdr.
const ext = (await import(process.argv[2])).default;

const registered = new Map();
const handlers = {};
let active = [];
const events = [];
let started = false;
const pi = {
  on(name, fn) { handlers[name] = fn; },
  registerTool(t) { registered.set(t.name, t); events.push("register " + t.name); },
  getActiveTools() { if (!started) throw new Error("getActiveTools before session_start"); return [...active]; },
  setActiveTools(names) { if (!started) throw new Error("setActiveTools before session_start"); active = [...names]; events.push("active " + names.join(",")); },
};
const notices = [];
const ctx = { ui: { notify(m, level) { notices.push(level + ": " + m); } } };

async function call(name, params) {
  const t = registered.get(name);
  if (!t) return { missing: true };
  try {
    const r = await t.execute("id-" + name, params, undefined, undefined, ctx);
    return { text: r.content.map((c) => c.text).join("\n"), details: r.details };
  } catch (e) {
    return { error: e.message };
  }
}
const until = async (cond) => { for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10)); };

await ext(pi);
const atLoad = [...registered.keys()];
started = true;
active = ["read", "bash"];
await handlers.session_start?.({ reason: "startup" }, ctx);
const out = { atLoad, notices };
out.systemPrompt = (await handlers.before_agent_start?.({ prompt: "hi", systemPrompt: "BASE" }, ctx))?.systemPrompt ?? "BASE";
if (atLoad.length > 0) {
  out.activate = await call("herdr_link", {});
  await until(() => registered.size === 4 && active.includes("herdr_link_close"));
  out.afterActivation = [...registered.keys()];
  out.active = active;
  out.peers = await call("herdr_link_peers", {});
  out.send = await call("herdr_link_send", { to: "reviewer", message: "from pi" });
  out.hidden = await call("herdr_link_send", { to: "ops", message: "x" });
  out.gatewayPeers = await call("herdr_link", { action: "peers" });
}
out.events = events;
await handlers.session_shutdown?.({ reason: "quit" }, ctx);
console.log(JSON.stringify(out));
