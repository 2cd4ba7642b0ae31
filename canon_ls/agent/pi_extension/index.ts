/**
 * canon for Pi: the project memory kept in the repository's .canon/ store, written by
 * `canon init pi`. This file is a bridge, not an implementation: on each Pi event it sends one
 * JSON object to `canon hook pi` (stdin) and acts on the JSON it prints, so Pi surfaces and
 * reminds exactly as the Claude Code and Codex hooks do. Event mapping: docs/AGENTS.md, "Pi".
 *
 * canon: $CANON_BIN, else `canon` in PATH's absolute entries. If it is missing or fails, one
 * warning is shown and the extension stays silent for the rest of the process.
 */
import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

type Reply = Record<string, any> | null;
type Call = { id: string; tool: string; input: unknown; isError: boolean };

const MESSAGE_TYPE = "canon";
const TIMEOUT_MS = 30_000;
const INSTALL = "canon: the `canon` command was not found. Install it " +
  "(pipx install /path/to/a/clone/of/canon-ls) so that it is on the PATH Pi sees, " +
  "or set CANON_BIN to the canon executable; canon stays off until then.";

function findCanon(): string | undefined {
  const given = process.env.CANON_BIN;
  if (given) return given;
  const names = process.platform === "win32" ? ["canon.exe", "canon.cmd", "canon"] : ["canon"];
  for (const dir of (process.env.PATH ?? "").split(delimiter).filter(isAbsolute)) { // not "", "."
    for (const name of names) {
      const candidate = join(dir, name); // a relative entry would run the repository's own canon
      try {
        if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
      } catch {} // unreadable PATH entry: try the next one
    }
  }
  return undefined;
}

export default function canon(pi: ExtensionAPI) {
  const bin = findCanon();
  let broken = false; // after the one warning, canon stays silent
  let active = false; // this project has a store: surface, remind
  let again = false; // the last stop check asked for a continuation
  let calls: Call[] = [];
  let projection: unknown; // the messages of the last model request (canon judges presence on them)
  const surfaced = new Set<string>();

  function warn(ctx: ExtensionContext | undefined, text: string): void {
    if (broken) return;
    broken = true;
    if (ctx?.hasUI) ctx.ui.notify(text, "warning");
    else console.error(text);
  }

  function run(args: string[], input: string, cwd: string): Promise<{ code: number; out: string; err: string }> {
    return new Promise((resolve, reject) => {
      const child = execFile(bin!, args, { cwd, timeout: TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, out, err) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        if (error && code === -1) reject(error);
        else resolve({ code, out: String(out), err: String(err) });
      });
      child.stdin?.on("error", () => {}); // a canon that exits early must not crash Pi
      child.stdin?.end(input);
    });
  }

  /** One event to `canon hook pi`; its reply, or null (and a single warning) on any failure. */
  async function bridge(ctx: ExtensionContext, event: Record<string, unknown>): Promise<Reply> {
    if (broken) return null;
    if (!bin) return (warn(ctx, INSTALL), null);
    const session = ctx.sessionManager.getSessionId();
    try {
      const done = await run(["hook", "pi"], JSON.stringify({ ...event, cwd: ctx.cwd, session }), ctx.cwd);
      if (done.code !== 0) throw new Error(done.err.trim() || `exit ${done.code}`);
      return done.out.trim() ? JSON.parse(done.out) : null;
    } catch (error) {
      warn(ctx, `canon: \`${bin} hook pi\` failed (${(error as Error).message}); canon stays off in this session.`);
      return null;
    }
  }

  function note(content: string) {
    return { type: "custom_message" as const, customType: MESSAGE_TYPE, content, display: true };
  }

  function say(ctx: ExtensionContext, text: string): void {
    if (ctx.hasUI) ctx.ui.notify(text, "info");
    else console.log(text);
  }

  pi.on("session_start", async (event, ctx) => {
    [active, again, calls, projection] = [false, false, [], undefined];
    surfaced.clear();
    // A stored conversation (e.g. `pi --continue`) still holds what surfaced before.
    const resumed = ctx.sessionManager.getBranch().some((entry) => entry.type === "message");
    const reply = await bridge(ctx, { event: "session_start", reason: event.reason, resumed });
    active = reply?.active === true;
    if (reply?.notice) say(ctx, String(reply.notice));
    const tool = reply?.tool; if (!tool) return;
    pi.registerTool({
      name: "canon",
      label: "canon",
      description: tool.description,
      promptSnippet: tool.snippet,
      promptGuidelines: tool.guidelines,
      parameters: tool.parameters,
      async execute(_id, params, _signal, _onUpdate, toolCtx) {
        const result = await bridge(toolCtx, { event: "tool", input: params });
        if (!result) throw new Error("canon is unavailable in this session; see the warning above.");
        return { content: [{ type: "text", text: String(result.text) }], details: undefined, isError: result.isError === true };
      },
    });
  });

  pi.on("session_compact", async (_event, ctx) => {
    if (active) await bridge(ctx, { event: "session_compact", presence: true });
  });

  // What the model receives, after any fold or compaction (the later phase sees every fold).
  const observe = async (event: { messages: unknown }) => void (projection = active ? event.messages : undefined);
  pi.on("context", observe);
  pi.on("context_with_system", observe);

  pi.on("before_agent_start", async (event, ctx) => {
    again = false;
    if (!active || event.messageType !== "user") return;
    const reply = await bridge(ctx, { event: "prompt", prompt: event.prompt });
    if (reply?.message) return { message: { customType: MESSAGE_TYPE, content: String(reply.message), display: true } };
  });

  // A message typed while Pi works (steer, follow-up) starts no run, so it reaches canon here;
  // Pi delivers one queued message per model request, so the reply rides the message itself.
  pi.on("input", async (event, ctx) => {
    if (!active || !event.streamingBehavior) return;
    const reply = await bridge(ctx, { event: "prompt", prompt: event.text });
    if (reply?.message) return { action: "transform", text: `${event.text}\n\n${reply.message}` };
  });

  pi.on("tool_result", async (event) => {
    if (active) calls.push({ id: event.toolCallId, tool: event.toolName, input: event.input, isError: event.isError });
  });

  pi.on("turn_end", async (event, ctx) => {
    if (!active || calls.length === 0) return;
    // Parallel calls finish in any order: send them in the order the model made them.
    const order = event.toolResults.map((result) => result.toolCallId);
    const rank = (call: Call) => {
      const at = order.indexOf(call.id.split("/")[0]); // nested calls: `<parent id>/<n>`
      return at < 0 ? order.length : at;
    };
    const batch = calls.sort((a, b) => rank(a) - rank(b));
    calls = [];
    const reply = await bridge(ctx, { event: "turn_end", calls: batch, projection });
    if (!reply?.message) return;
    for (const address of reply.surfaced ?? []) surfaced.add(String(address));
    return { entries: [...event.entries, note(String(reply.message))] };
  });

  pi.on("agent_before_settle", async (event, ctx) => {
    if (!active || event.outcome !== "completed") return;
    const reply = await bridge(ctx, { event: "stop", again });
    if (!reply?.message) return;
    again = true;
    return { entries: [...event.entries, note(String(reply.message))], continue: true };
  });

  pi.registerCommand("canon", {
    description: "canon: the store's status line and what surfaced in this session",
    handler: async (_args, ctx) => {
      const reply = await bridge(ctx, { event: "status", surfaced: [...surfaced] });
      if (reply?.text) say(ctx, String(reply.text));
    },
  });

  pi.registerCommand("canon-settings", {
    description: "canon: show and change the settings (or `set KEY VALUE` directly)",
    handler: async (args, ctx) => {
      if (broken || !bin) return warn(ctx, INSTALL); // warns once, and never when broken
      const settings = (words: string[]) => run(["settings", ...words], "", ctx.cwd);
      try {
        const words = args.trim() ? args.trim().split(/\s+/) : [];
        const shown = await settings(words);
        const text = (shown.out + shown.err).trim();
        if (words.length > 0 || !ctx.hasUI || shown.code !== 0) return say(ctx, text);
        // stdout: one line per option (`key = value  source`); stderr: problems of the files.
        if (shown.err.trim()) say(ctx, shown.err.trim());
        const choice = await ctx.ui.select("canon settings: choose one to change", shown.out.trim().split("\n"));
        const key = choice?.split(" ")[0];
        if (!key) return;
        const current = choice!.split("=").slice(1).join("=").trim().split(/\s{2,}/)[0];
        const value = await ctx.ui.input(`canon settings: new value for ${key}`, current);
        if (!value?.trim()) return;
        const done = await settings(["set", key, value.trim()]);
        say(ctx, (done.out + done.err).trim());
      } catch (error) {
        warn(ctx, `canon: \`${bin} settings\` failed (${(error as Error).message}).`);
      }
    },
  });
}
