/**
 * herdr-link for Pi (0.73 and other versions without built-in MCP).
 *
 * A Pi extension that runs herdr-link as an MCP server over stdio and
 * offers its tools to the model. It holds no protocol logic: it lists the
 * server's tools, registers each as a Pi tool, passes calls and results
 * through, and lists again when the server says the list changed (after
 * activation). Pi picks up new tools from the next prompt on; until then
 * the herdr_link gateway's action form does everything.
 *
 * Install (one command; it writes this file with the binary's path):
 *
 *   mkdir -p ~/.pi/agent/extensions && herdr-link config pi > ~/.pi/agent/extensions/herdr-link.ts
 *
 * or copy this file there and set HERDR_LINK_BIN (else herdr-link is
 * looked up on PATH); a path written by config pi is used as it is,
 * whatever HERDR_LINK_BIN says. Start Pi in a Herdr pane.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";

const HERDR_LINK_BIN = "herdr-link";
// The binary to run: the path `herdr-link config pi` wrote above wins; a
// file copied as it is (the bare name) takes HERDR_LINK_BIN from the
// environment, else herdr-link on PATH.
const BIN = HERDR_LINK_BIN !== "herdr-link" ? HERDR_LINK_BIN : process.env.HERDR_LINK_BIN || HERDR_LINK_BIN;
const SETUP_TIMEOUT_MS = 10_000;
// NOT_RUNNING is what the model (and the system prompt) sees when
// herdr-link is not running: a fixed text with no path or id in it.
const NOT_RUNNING = "herdr-link is not running; run `herdr-link probe` in this pane to see why.";

// The few parts of Pi's ExtensionAPI this adapter uses.
interface PiContext {
	ui?: { notify?(message: string, level: "info" | "warning" | "error"): void };
}
interface PiAPI {
	on(event: string, handler: (event: unknown, ctx: PiContext) => unknown): void;
	registerTool(tool: {
		name: string;
		label: string;
		description: string;
		parameters: unknown;
		execute(id: string, params: unknown, signal?: AbortSignal): Promise<{ content: unknown[]; details: unknown }>;
	}): void;
	getActiveTools(): string[];
	setActiveTools(names: string[]): void;
}

interface McpTool {
	name: string;
	title?: string;
	description?: string;
	inputSchema?: unknown;
}
interface McpResult {
	content?: { type: string; text?: string }[];
	structuredContent?: unknown;
	isError?: boolean;
}

type Pending = { resolve(v: any): void; reject(e: Error): void };

class McpChild {
	private child: ChildProcessWithoutNullStreams;
	private seq = 0;
	private pending = new Map<number, Pending>();
	private stderrTail: string[] = [];
	onListChanged: () => void = () => {};
	// Model-facing texts are fixed: herdr-link's stderr names panes and
	// sockets, so it goes only to the user's screen (diagnostics()).

	constructor(bin: string) {
		// The pane's environment (HERDR_*) passes on unchanged.
		this.child = spawn(bin, [], { stdio: ["pipe", "pipe", "pipe"], env: process.env });
		this.child.on("error", (err) => {
			this.stderrTail.push(`could not start ${bin}: ${err.message}`);
			this.failAll(new Error(NOT_RUNNING));
		});
		this.child.on("exit", () => this.failAll(new Error(NOT_RUNNING)));
		this.child.stdin.on("error", () => {}); // a dead child: its calls fail through "exit"
		createInterface({ input: this.child.stdout }).on("line", (line) => this.onLine(line));
		// Keep stderr off Pi's screen; remember its end for the user.
		createInterface({ input: this.child.stderr }).on("line", (line) => {
			this.stderrTail.push(line);
			if (this.stderrTail.length > 5) this.stderrTail.shift();
		});
	}

	private onLine(line: string) {
		let msg: any;
		try {
			msg = JSON.parse(line);
		} catch {
			return;
		}
		if (msg.method === "notifications/tools/list_changed") {
			this.onListChanged();
			return;
		}
		if (msg.method !== undefined && msg.id !== undefined) {
			// A request from the server (ping): answer it.
			this.write({ jsonrpc: "2.0", id: msg.id, result: {} });
			return;
		}
		const p = this.pending.get(msg.id);
		if (!p) return;
		this.pending.delete(msg.id);
		if (msg.error) p.reject(new Error(`herdr-link: ${msg.error.message}`));
		else p.resolve(msg.result);
	}

	private write(msg: unknown) {
		if (this.child.stdin.writable) this.child.stdin.write(JSON.stringify(msg) + "\n");
	}

	// diagnostics is the end of herdr-link's stderr, for the user only.
	diagnostics(): string {
		return this.stderrTail.join("\n");
	}

	private failAll(err: Error) {
		for (const p of this.pending.values()) p.reject(err);
		this.pending.clear();
	}

	// request sends one call; timeoutMs (0: none) bounds set-up calls so a
	// server that never answers cannot hang Pi's start. Tool calls have
	// herdr-link's own deadlines and Pi's abort signal.
	request(method: string, params: unknown, signal?: AbortSignal, timeoutMs = 0): Promise<any> {
		const id = ++this.seq;
		return new Promise((resolve, reject) => {
			if (this.child.exitCode !== null) return reject(new Error(NOT_RUNNING));
			this.pending.set(id, { resolve, reject });
			if (timeoutMs > 0) {
				setTimeout(() => {
					if (this.pending.delete(id)) reject(new Error(`herdr-link did not answer ${method} within ${timeoutMs / 1000} s`));
				}, timeoutMs).unref();
			}
			signal?.addEventListener("abort", () => {
				if (!this.pending.delete(id)) return;
				this.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "aborted" } });
				reject(new Error("cancelled"));
			});
			this.write({ jsonrpc: "2.0", id, method, params });
		});
	}

	notify(method: string) {
		this.write({ jsonrpc: "2.0", method });
	}

	// stop ends the child: EOF first (herdr-link exits on it), SIGTERM
	// after 500 ms; at process exit at once.
	stop(now = false) {
		if (this.child.exitCode !== null) return;
		if (now) {
			this.child.kill("SIGTERM");
			return;
		}
		this.child.stdin.end();
		setTimeout(() => this.child.kill("SIGTERM"), 500).unref();
	}
}

export default async function herdrLink(pi: PiAPI) {
	const mcp = new McpChild(BIN);
	process.once("exit", () => mcp.stop(true));
	const registered = new Set<string>();
	let ready = false; // setActiveTools works from session_start on
	let waiting: string[] = [];

	const activate = (names: string[]) => {
		if (names.length === 0) return;
		if (!ready) {
			waiting.push(...names);
			return;
		}
		const active = new Set(pi.getActiveTools());
		for (const n of names) active.add(n);
		pi.setActiveTools([...active]);
	};

	const register = (tool: McpTool) => {
		pi.registerTool({
			name: tool.name,
			label: tool.title || tool.name,
			description: tool.description || "",
			parameters: tool.inputSchema ?? { type: "object" },
			async execute(_id, params, signal) {
				const res: McpResult = await mcp.request("tools/call", { name: tool.name, arguments: params ?? {} }, signal);
				const content = (res.content ?? []).map((c) => (c.type === "text" ? { type: "text", text: c.text ?? "" } : c));
				if (res.isError) throw new Error(content.map((c: any) => c.text ?? "").join("\n"));
				return { content, details: res.structuredContent ?? {} };
			},
		});
	};

	const refresh = async () => {
		const { tools } = (await mcp.request("tools/list", {}, undefined, SETUP_TIMEOUT_MS)) as { tools: McpTool[] };
		const added: string[] = [];
		for (const t of tools) {
			if (registered.has(t.name)) continue;
			registered.add(t.name);
			register(t);
			added.push(t.name);
		}
		activate(added);
		return tools.length;
	};

	let notice = "";
	let instructions = "";
	try {
		const init = await mcp.request(
			"initialize",
			{ protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "herdr-link-pi", version: "1" } },
			undefined,
			SETUP_TIMEOUT_MS,
		);
		instructions = init?.instructions ?? "";
		mcp.notify("notifications/initialized");
		mcp.onListChanged = () => void refresh().catch(() => {});
		if ((await refresh()) === 0) notice = instructions || "herdr-link offers no tools here.";
	} catch (err) {
		notice = (err as Error).message; // fixed texts only (see McpChild)
	}

	pi.on("session_start", (_event, ctx) => {
		ready = true;
		const names = waiting;
		waiting = [];
		activate(names);
		if (notice) {
			const detail = mcp.diagnostics();
			ctx.ui?.notify?.(detail ? `${notice}\n${detail}` : notice, "warning");
		}
	});
	// Like MCP hosts, show the model the server's instructions (outside
	// Herdr they say why there are no tools).
	pi.on("before_agent_start", (event: any) => {
		const text = instructions || notice;
		if (!text || typeof event?.systemPrompt !== "string") return;
		return { systemPrompt: `${event.systemPrompt}\n\n# herdr_link (MCP server)\n${text}` };
	});
	pi.on("session_shutdown", () => mcp.stop());
}
