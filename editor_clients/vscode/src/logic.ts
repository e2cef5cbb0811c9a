// Pure logic of the extension, with no dependency on the vscode API, so it is unit-tested.

/** Settings under "conductor.*" as VS Code flattens them. */
export type FlatSettings = Record<string, unknown>;

const SERVER_ONLY = new Set(["server.command"]);
const SERVER_KEYS: Record<string, string> = { preview: "preview", configFile: "configFile", logFile: "logFile" };

/** Turn flat "section.key" settings into the nested shape conductor.toml uses. */
export function toServerSettings(flat: FlatSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    if (value === undefined || value === null || SERVER_ONLY.has(key)) continue;
    if (key in SERVER_KEYS) {
      out[SERVER_KEYS[key]] = value;
      continue;
    }
    const parts = key.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      if (typeof node[part] !== "object" || node[part] === null) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    const leaf = parts[parts.length - 1];
    if (leaf === "workers" && typeof value === "object" && Object.keys(value as object).length === 0) continue;
    node[leaf] = value;
  }
  return out;
}

/** Drop settings equal to their defaults, so conductor.toml in the workspace still wins. */
export function onlyChanged(flat: FlatSettings, defaults: FlatSettings): FlatSettings {
  const out: FlatSettings = {};
  for (const [key, value] of Object.entries(flat)) {
    if (JSON.stringify(value) !== JSON.stringify(defaults[key])) out[key] = value;
  }
  return out;
}

export interface JobProgress {
  token: string;
  title: string;
  message?: string;
}

/** The status bar text for the running jobs. */
export function statusText(jobs: JobProgress[]): string {
  if (jobs.length === 0) return "$(check) Conductor";
  if (jobs.length === 1) {
    const j = jobs[0];
    return `$(sync~spin) ${j.title}${j.message ? ": " + truncate(j.message, 40) : ""}`;
  }
  return `$(sync~spin) Conductor: ${jobs.length} jobs`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + "…";
}

/** The server command from settings, checked: a non-empty list of strings. */
export function serverCommand(value: unknown): { command: string; args: string[] } {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string" && v)) {
    throw new Error("conductor.server.command must be a non-empty list of strings");
  }
  return { command: value[0], args: value.slice(1) };
}

/** A hunk the user unticked in the refactor preview, as `conductor/reasons` lists it. */
export interface RejectedHunk {
  index: number;
  path: string;
  label: string;
  diff: string;
}

/** What the input box asks about one unticked hunk: its place and first changed line. */
export function reasonPrompt(h: RejectedHunk, of: number, total: number): string {
  const first = h.diff.split("\n").find((l) => /^[+-](?![+-])/.test(l)) ?? "";
  return `Why not ${h.label}${total > 1 ? ` (${of} of ${total})` : ""}? ${truncate(first.trim(), 60)}`;
}

/** The answer to `conductor/reasons`: a list (the server reads no object keyed by index),
 * blank answers dropped; another try only when there is a reason to give it. */
export function reasonsAnswer(
  hunks: RejectedHunk[],
  answers: (string | undefined)[],
  again: boolean,
): { reasons: { index: number; reason: string }[]; again: boolean } {
  const reasons = hunks
    .map((h, i) => ({ index: h.index, reason: (answers[i] ?? "").trim() }))
    .filter((r) => r.reason);
  return { reasons, again: again && reasons.length > 0 };
}
