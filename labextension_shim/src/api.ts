/**
 * The sidebar's only way to the server: the dsh REST API at `<base_url>dsh/api`, with Jupyter's
 * own authentication (token, XSRF) through `ServerConnection`. Nothing here reaches the disk
 * any other way, so the sidebar is confined exactly as every other surface.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** What `POST dsh/api/tools/{name}` answers. */
export interface IToolResult<V = any> {
  tool: string;
  session: string;
  callId: string;
  isError: boolean;
  text: string;
  value: V;
}

/**
 * What every tool's success value says about its page, so nothing here parses the text back.
 */
export interface IPage {
  /** The `offset` argument of the next page; null on the last page or for a tool that does not page. */
  nextOffset: number | null;
  /**
   * The model's footer, verbatim: the end of the text that says how much of the whole this page is
   * (`(Showing matches 1-250 of 1135 in path order. Use offset=251 to continue.)`); '' if none.
   */
  footer: string;
}

/** One row of `GET dsh/api/sessions/{id}/calls`. */
export interface ICall {
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  text: string;
  isError: boolean;
  surface: string;
  user: string | null;
  started: number;
  durationMs: number | null;
  /** How a person had the call's file open in JupyterLab when it ran; null: not open, or it failed. */
  open?: 'shared' | 'tab' | 'unsaved' | null;
}

export interface ICallPage {
  session: string;
  offset: number;
  total: number;
  calls: ICall[];
}

export interface ISessionInfo {
  id: string;
  cwd: string;
  calls?: number;
  /** When it was made (seconds since the epoch). */
  created?: number;
  /** When the newest call in its log started; null when it has none. */
  lastCall?: number | null;
}

const API = 'dsh/api';

/** An HTTP error from the API, with the server's `{code, message}` when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message);
  }
}

async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal
): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, API, path);
  const init: RequestInit = { method, signal };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
  }
  const response = await ServerConnection.makeRequest(url, init, settings);
  let data: any = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(
      response.status,
      String(data?.code ?? 'HTTP_' + response.status),
      String(data?.message ?? response.statusText)
    );
  }
  return data as T;
}

/**
 * Run one tool. `signal` aborts the request; the server then sees the client leave and stops
 * the call (a search kills its rg). `options` are further fields of the request's body
 * (`respect_ignore_files`: this call honours the workspace's .gitignore files).
 */
export function callTool<V = any>(
  name: string,
  args: Record<string, unknown>,
  session?: string,
  signal?: AbortSignal,
  progressId?: string,
  options?: { respect_ignore_files?: boolean }
): Promise<IToolResult<V>> {
  const body: Record<string, unknown> = session ? { session, args, ...options } : { args, ...options };
  if (progressId) {
    body.progress_id = progressId; // while it runs, progress(progressId) says how far it got
  }
  return request<IToolResult<V>>('POST', `tools/${encodeURIComponent(name)}`, body, signal);
}

/**
 * How far a call posted with this progress id got: `{running, progress}` ("… so far" or null);
 * a search's first matches as `rows` once rg has written some.
 */
export function progress(
  progressId: string
): Promise<{ running: boolean; progress: string | null; rows?: { path: string; line: number; text: string }[] }> {
  return request('GET', `progress/${encodeURIComponent(progressId)}`);
}

/** What `GET dsh/api/browse` answers: list's value sorted or filtered over the whole folder. */
export interface IBrowseValue {
  path: string;
  offset?: number;
  entries?: { name: string; type: string; size?: number | null; mtime?: number | null }[];
  totalEntries?: number;
  matchedEntries?: number;
  hiddenEntries?: number;
  counts?: { directories: number; files: number; other: number };
  stamp: number[] | null;
}

/**
 * A listing page for the person's view (not a tool call, not logged): `sort` is `model`,
 * `name`, `size` or `modified`; `limit: 0` answers only the folder's stamp, a cheap
 * "changed since?" check.
 */
export function browse(
  params: Record<string, string | number | boolean | undefined>,
  signal?: AbortSignal
): Promise<IBrowseValue> {
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return request<IBrowseValue>('GET', `browse?${query}`, undefined, signal);
}

export function listSessions(): Promise<ISessionInfo[]> {
  return request<ISessionInfo[]>('GET', 'sessions');
}

export function listCalls(session: string, offset: number, limit: number): Promise<ICallPage> {
  const query = `?offset=${offset}&limit=${limit}`;
  return request<ICallPage>('GET', `sessions/${encodeURIComponent(session)}/calls${query}`);
}

/** One file a person has open in JupyterLab, as `GET dsh/api/documents` names it. */
export interface IOpenFile {
  /** Relative to the server's root, as `list` names it. */
  path: string;
  /** A shared document (real-time collaboration); else open in tabs. */
  shared: boolean;
  /** Tabs that have it open (for a shared document: connections, one per page). */
  tabs: number;
  /** A tab's copy holds unsaved changes (null for a shared document). */
  unsaved: boolean | null;
}

export interface IOpenFiles {
  files: IOpenFile[];
  /** Every open file that may be shown (`files` holds the first 1000). */
  total: number;
  /** Open files left out as `list` leaves them out (hidden, protected, outside the root). */
  notShown: number;
}

/** What a person has open in JupyterLab now (not a tool call: not logged). */
export function openFiles(): Promise<IOpenFiles> {
  return request<IOpenFiles>('GET', 'documents');
}

