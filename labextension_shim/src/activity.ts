/**
 * The sidebar's agent activity: the call log of one session as it grows, from
 * `GET dsh/api/sessions/{id}/calls`, polled every 2 s while the section is on screen, beside the
 * files the person has open in JupyterLab (`openfiles.ts`, refreshed by the same poll).
 *
 * - The first look takes the newest 50 calls; each later poll asks only for what came after
 *   the last one seen (`offset` = calls seen), so a quiet session costs one small request.
 *   A session that shrank (deleted and made again) or grew by more than a page is read afresh.
 * - Rows are newest first: time, surface, tool with its key arguments, an error badge, and an
 *   `open` badge when the call's file was open in JupyterLab as it ran (its record's `open`).
 *   A click shows the call's text exactly as the model got it; for `write` and `edit` the file
 *   is one more click away.
 * - The session picker lists `GET dsh/api/sessions` (on focus and every 10 s); it starts on
 *   `default`.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';
import { PathExt } from '@jupyterlab/coreutils';

import { ApiError, ICall, ISessionInfo, listCalls, listSessions } from './api';
import { fill, h } from './common/dom';
import { openTarget } from './open';
import { OpenFilesView, openBadge } from './openfiles';

export const POLL_MS = 2000;

/** Calls read on a first look, and the most kept on screen. */
const TAIL = 50;
const KEEP = 200;
/** Newer calls asked for per poll; more than this since the last poll reads the tail afresh. */
const STEP = 100;
/** Polls between two refreshes of the session list. */
const SESSIONS_EVERY = 5;

/** The tools whose call changed the file named by file_path: the row offers to open it. */
const CHANGES_A_FILE = new Set(['write', 'edit', 'edit_cells']);

const KEY_ARGS = ['file_path', 'path', 'pattern', 'include', 'output_mode', 'offset', 'limit'];

/** The arguments worth a glance, `pattern=TODO path=src`, in a fixed order. */
export function keyArgs(args: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of KEY_ARGS) {
    const value = args?.[key];
    if (value !== undefined && value !== null && value !== '') {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      parts.push(key === 'file_path' || key === 'path' ? text : `${key}=${text}`);
    }
  }
  return parts.join('  ');
}

function clock(started: number): string {
  const d = new Date(started * 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

export class ActivityView {
  readonly node: HTMLElement;
  private readonly picker: HTMLSelectElement;
  private readonly status: HTMLElement;
  private readonly list: HTMLElement;
  private readonly openFiles: OpenFilesView;
  private session = 'default';
  private sessions: ISessionInfo[] = [];
  private seen = 0;
  private calls: ICall[] = [];
  private timer: number | undefined;
  private polls = 0;
  private busy = false;
  /** Bumped on a session change: a poll for the session before is dropped. */
  private generation = 0;

  constructor(private readonly docManager: IDocumentManager) {
    this.picker = h('select', {
      class: 'dsh-sb-session jp-mod-styled',
      'aria-label': 'Session',
      onfocus: () => void this.refreshSessions(),
      onchange: () => this.choose(this.picker.value)
    });
    this.picker.append(h('option', { value: 'default' }, 'default'));
    this.status = h('div', { class: 'dsh-sb-status', 'aria-live': 'polite' });
    this.list = h('div', { class: 'dsh-sb-calls', role: 'list' });
    this.openFiles = new OpenFilesView(docManager);
    this.node = h(
      'div',
      { class: 'dsh-sb-activity' },
      this.openFiles.node,
      h('div', { class: 'dsh-sb-row' }, h('label', { class: 'dsh-sb-label' }, 'Session'), this.picker),
      this.status,
      this.list
    );
  }

  /** Poll while shown, never while hidden. */
  setVisible(visible: boolean): void {
    window.clearInterval(this.timer);
    this.timer = undefined;
    if (visible) {
      void this.refreshSessions();
      void this.poll();
      this.timer = window.setInterval(() => void this.poll(), POLL_MS);
    }
  }

  private choose(session: string): void {
    if (session === this.session) {
      return;
    }
    this.session = session;
    this.generation++;
    this.seen = 0;
    this.calls = [];
    fill(this.list);
    this.status.textContent = '';
    void this.poll(true);
  }

  private async refreshSessions(): Promise<void> {
    let sessions: ISessionInfo[];
    try {
      sessions = await listSessions();
    } catch {
      return; // the poll says what is wrong
    }
    this.sessions = sessions;
    const ids = sessions.map(s => s.id);
    for (const id of ['default', this.session]) {
      if (!ids.includes(id)) {
        ids.unshift(id);
      }
    }
    const now = Array.from(this.picker.options).map(o => o.value);
    if (now.join('\n') !== ids.join('\n')) {
      fill(this.picker, ...ids.map(id => h('option', { value: id }, id)));
      this.picker.value = this.session;
    }
  }

  private async poll(force = false): Promise<void> {
    if (document.visibilityState === 'hidden') {
      return;
    }
    void this.openFiles.refresh(); // its own request, never doubled: a slow call log does not hold it
    if (this.busy && !force) {
      return;
    }
    if (++this.polls % SESSIONS_EVERY === 0) {
      void this.refreshSessions();
    }
    const generation = this.generation;
    const session = this.session;
    this.busy = true;
    try {
      let page = await listCalls(session, this.seen, STEP);
      if (generation !== this.generation) {
        return;
      }
      const behind = page.total - this.seen - page.calls.length;
      if (page.total < this.seen || behind > 0 || (this.seen === 0 && page.total > TAIL)) {
        // first look, a gap, or a session made again: read the newest calls afresh
        const offset = Math.max(0, page.total - TAIL);
        page = await listCalls(session, offset, TAIL);
        if (generation !== this.generation) {
          return;
        }
        this.calls = [];
        this.seen = offset;
        fill(this.list);
      }
      this.seen += page.calls.length;
      this.add(page.calls);
      this.status.textContent = page.total
        ? `${page.total} call${page.total === 1 ? '' : 's'} in session ${session}`
        : `No calls yet in session ${session}`;
    } catch (error) {
      if (generation !== this.generation) {
        return;
      }
      if (error instanceof ApiError && error.status === 404) {
        this.status.textContent = `No calls yet in session ${session}`;
      } else {
        this.status.textContent =
          error instanceof ApiError ? `${error.status} ${error.code}: ${error.message}` : String(error);
      }
    } finally {
      if (generation === this.generation) {
        this.busy = false;
      }
    }
  }

  /** New calls (oldest first) go on top, newest first; the list keeps the newest KEEP. */
  private add(calls: ICall[]): void {
    for (const call of calls) {
      this.calls.push(call);
      this.list.prepend(this.row(call));
    }
    while (this.calls.length > KEEP) {
      this.calls.shift();
      this.list.lastElementChild?.remove();
    }
  }

  private row(call: ICall): HTMLElement {
    const detail = h('div', { class: 'dsh-sb-call-detail', hidden: true });
    const head = h(
      'div',
      {
        class: 'dsh-sb-call-head',
        role: 'button',
        tabindex: 0,
        'aria-expanded': 'false',
        onclick: () => toggle(),
        onkeydown: (event: KeyboardEvent) => {
          if (event.key === 'Enter') {
            toggle();
          }
        }
      },
      h('span', { class: 'dsh-sb-time' }, clock(call.started)),
      h('span', { class: 'dsh-sb-surface' }, call.surface),
      h('span', { class: 'dsh-sb-tool' }, call.tool),
      h('span', { class: 'dsh-sb-args', title: JSON.stringify(call.args) }, keyArgs(call.args)),
      call.isError ? h('span', { class: 'dsh-sb-badge-error' }, 'error') : null,
      openBadge(call)
    );
    const toggle = (): void => {
      const open = detail.hidden;
      if (open && !detail.firstChild) {
        fill(detail, this.touched(call), h('pre', { class: 'dsh-sb-call-text' }, call.text));
      }
      detail.hidden = !open;
      head.setAttribute('aria-expanded', String(open));
    };
    return h(
      'div',
      {
        class: 'dsh-sb-call',
        role: 'listitem',
        'data-call-id': call.callId,
        'data-tool': call.tool,
        'data-open': call.open ?? null
      },
      head,
      detail
    );
  }

  /** For write, edit and edit_cells: a button opening the file they changed (its path from the session's cwd). */
  private touched(call: ICall): HTMLElement | null {
    const file = call.args?.file_path;
    if (!CHANGES_A_FILE.has(call.tool) || typeof file !== 'string' || !file) {
      return null;
    }
    if (file.startsWith('/') || file.startsWith('~')) {
      return h('div', { class: 'dsh-sb-touched' }, file);
    }
    const cwd = this.sessions.find(s => s.id === this.session)?.cwd ?? '.';
    const path = PathExt.normalize(cwd === '.' ? file : PathExt.join(cwd, file));
    return h(
      'button',
      {
        class: 'dsh-sb-open jp-mod-styled',
        title: `Open ${path} in the editor`,
        onclick: () => void openTarget(this.docManager, { path })
      },
      `Open ${path}`
    );
  }
}
