import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  JobProgress,
  RejectedHunk,
  onlyChanged,
  reasonPrompt,
  reasonsAnswer,
  serverCommand,
  statusText,
  toServerSettings,
} from "./logic";

let client: LanguageClient | undefined;
const jobs = new Map<string, JobProgress>();
/** Each running job's notification: report a message to it, or end it. */
const notices = new Map<string, { report: (message: string) => void; end: () => void }>();
let status: vscode.StatusBarItem;

function flatSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration("conductor");
  const flat: Record<string, unknown> = {};
  const defaults: Record<string, unknown> = {};
  const pkg = vscode.extensions.getExtension("conductor-lsp.conductor-lsp")?.packageJSON;
  const props = pkg?.contributes?.configuration?.properties ?? {};
  for (const full of Object.keys(props)) {
    const key = full.replace(/^conductor\./, "");
    flat[key] = cfg.get(key);
    defaults[key] = props[full].default;
  }
  return onlyChanged(flat, defaults);
}

function updateStatus(): void {
  status.text = statusText([...jobs.values()]);
  status.tooltip = jobs.size ? "Conductor jobs running; click to cancel" : "Conductor is idle";
  status.command = jobs.size ? "conductor.cancelJobs" : "conductor.showLastPlan";
}

async function exec(command: string, args: Record<string, unknown> = {}): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showErrorMessage("Conductor: the server is not running");
    return;
  }
  const result = await client.sendRequest<{ started?: boolean; reason?: string }>(
    "workspace/executeCommand", { command, arguments: [args] });
  if (result && result.started === false && result.reason) {
    void vscode.window.showWarningMessage(result.reason);
  }
}

interface Candidate {
  index: number;
  label: string;
  verdict: string;
  tokens: number;
  cost: number;
  diff: string;
  applicable: boolean;
  chosen: boolean;
}

/** The last fix job's candidates in a quick pick (verdict, tokens, cost, the diff's first
 * changed lines); the chosen one's diff opens, and a confirmation applies it. */
async function showCandidates(): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showErrorMessage("Conductor: the server is not running");
    return;
  }
  const result = await client.sendRequest<{ jobId: string | null; candidates: Candidate[] }>(
    "workspace/executeCommand", { command: "conductor.showCandidates", arguments: [{}] });
  if (!result || !result.candidates.length) {
    void vscode.window.showInformationMessage("Conductor: no candidates to show yet");
    return;
  }
  const items = result.candidates.map((c) => ({
    label: `#${c.index} ${c.label}`,
    description: `${c.verdict} · ${c.tokens} tokens · $${c.cost.toFixed(4)}${c.chosen ? " · applied by the job" : ""}`,
    detail: candidateSummary(c.diff),
    candidate: c,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `Conductor: candidates of job ${result.jobId}`,
    placeHolder: "Pick one to see its diff and apply it instead",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return;
  const c = picked.candidate;
  if (!c.applicable) {
    void vscode.window.showWarningMessage(`Conductor: candidate #${c.index} has nothing verified to apply (${c.verdict})`);
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ content: c.diff, language: "diff" });
  await vscode.window.showTextDocument(doc, { preview: true });
  const go = await vscode.window.showWarningMessage(
    `Apply candidate #${c.index} (${c.verdict}) instead? Undo the Last Job brings back what the job left.`,
    { modal: true }, "Apply");
  if (go === "Apply") await exec("conductor.applyCandidate", { index: c.index, jobId: result.jobId });
}

/** The refactor preview has no place for words: after it, the server asks about the hunks
 * left unticked. One input box each (Enter with nothing: no reason; Esc: stop asking),
 * then whether to try again with those reasons. */
async function askReasons(params: { title: string; hunks: RejectedHunk[] }) {
  const answers: (string | undefined)[] = [];
  for (const [i, h] of params.hunks.entries()) {
    const why = await vscode.window.showInputBox({
      title: `${params.title}: you left out ${params.hunks.length === 1 ? "a change" : "changes"}`,
      prompt: reasonPrompt(h, i + 1, params.hunks.length),
      placeHolder: "A reason teaches the conductor (optional)",
      ignoreFocusOut: true,
    });
    if (why === undefined) break;
    answers.push(why);
  }
  let again = false;
  if (answers.some((a) => a && a.trim())) {
    const choice = await vscode.window.showQuickPick(
      ["Keep what I ticked", "Try again with my reasons"],
      { title: "Conductor", ignoreFocusOut: true });
    again = choice === "Try again with my reasons";
  }
  return reasonsAnswer(params.hunks, answers, again);
}

function candidateSummary(diff: string): string {
  const changed = diff.split("\n").filter((l) => /^[+-](?![+-])/.test(l));
  return changed.slice(0, 2).join("  ") + (changed.length > 2 ? ` (+${changed.length - 2} more)` : "");
}

function here(): Record<string, unknown> | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const sel = editor.selection;
  const diagnostics = vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((d) => d.range.intersection(sel.isEmpty ? editor.document.lineAt(sel.active.line).range : sel))
    .map((d) => ({ message: d.message, line: d.range.start.line, source: d.source ?? "" }));
  return {
    uri: editor.document.uri.toString(),
    range: {
      start: { line: sel.start.line, character: sel.start.character },
      end: { line: sel.end.line, character: sel.end.character },
    },
    diagnostics,
  };
}

/** A job as a notification: its title, each step as it comes, and a Cancel button.
 * The notice is registered at once: a quick job may end before VS Code runs the task. */
function notify(token: string, title: string, message?: string): void {
  let resolve!: () => void;
  const ended = new Promise<void>((r) => (resolve = r));
  let latest = message;
  let report = (m: string): void => {
    latest = m;
  };
  notices.set(token, { report: (m) => report(m), end: resolve });
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, cancel) => {
      if (latest) progress.report({ message: latest });
      report = (m) => progress.report({ message: m });
      cancel.onCancellationRequested(() => {
        void exec("conductor.cancel", { jobId: token.replace(/^conductor-/, "") });
      });
      return ended;
    },
  );
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const { command, args } = serverCommand(
    vscode.workspace.getConfiguration("conductor").get("server.command"));
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: toServerSettings(flatSettings()),
    // Not `synchronize.configurationSection`: that sends the raw section, defaults and
    // client-only keys included, which would override the workspace's conductor.toml.
    middleware: {
      workspace: {
        configuration: (params, token, next) =>
          params.items.map((item) => (item.section === "conductor" ? toServerSettings(flatSettings()) : null)),
      },
    },
  };
  client = new LanguageClient("conductor", "Conductor", serverOptions, clientOptions);
  // Tell the server this client answers conductor/reasons (see askReasons).
  client.registerFeature({
    fillClientCapabilities: (caps) => {
      caps.experimental = { ...(caps.experimental ?? {}), conductorReasons: true };
    },
    initialize: () => undefined,
    getState: () => ({ kind: "static" }),
    clear: () => undefined,
  });
  client.onRequest("conductor/reasons", askReasons);
  await client.start();
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("conductor") && client?.state === State.Running) {
        void client.sendNotification("workspace/didChangeConfiguration", {
          settings: toServerSettings(flatSettings()),
        });
      }
    }),
  );
  client.onNotification("$/progress", (params: { token: string; value: { kind: string; title?: string; message?: string } }) => {
    const token = String(params.token);
    if (!token.startsWith("conductor-")) return;
    const v = params.value;
    if (v.kind === "begin") {
      jobs.set(token, { token, title: v.title ?? "Conductor", message: v.message });
      notify(token, v.title ?? "Conductor", v.message);
    } else if (v.kind === "report" && jobs.has(token)) {
      jobs.get(token)!.message = v.message;
      if (v.message) notices.get(token)?.report(v.message);
    } else if (v.kind === "end") {
      jobs.delete(token);
      notices.get(token)?.end();
      notices.delete(token);
      if (v.message) vscode.window.setStatusBarMessage(`Conductor: ${v.message}`, 10000);
    }
    updateStatus();
  });
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  updateStatus();
  status.show();
  context.subscriptions.push(status);
  const reg = (name: string, fn: () => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(name, fn));
  reg("conductor.fixHere", () => exec("conductor.edit", here() ?? {}));
  reg("conductor.rewriteSelection", async () => {
    const at = here();
    if (!at) return;
    const instruction = await vscode.window.showInputBox({ prompt: "What should the selection do? (empty: read its comment)" });
    if (instruction === undefined) return;
    await exec("conductor.rewrite", { ...at, instruction });
  });
  reg("conductor.fixTestsNow", () => exec("conductor.fixTests", {}));
  reg("conductor.cancelJobs", () => exec("conductor.cancel", {}));
  reg("conductor.undoLast", () => exec("conductor.undo", {}));
  reg("conductor.showLastPlan", () => exec("conductor.showPlan", {}));
  reg("conductor.showLastCandidates", () => showCandidates());
  reg("conductor.restartServer", async () => {
    await client?.stop();
    jobs.clear();
    updateStatus();
    await start(context);
  });
  try {
    await start(context);
  } catch (err) {
    void vscode.window.showErrorMessage(`Conductor: could not start the server: ${err}`);
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
