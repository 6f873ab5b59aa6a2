/**
 * The sidebar's agent activity: the call log of one session as it grows, from
 * `GET dsh/api/sessions/{id}/calls`, polled every 2 s while the section is on screen, beside the
 * files the person has open in JupyterLab (`openfiles.ts`, refreshed by the same poll).
 *
 * - The first look takes the newest 50 calls; each later poll asks only for what came after
 *   the last one seen (`offset` = calls seen), so a quiet session costs one small request.
 *   A session that shrank (deleted and made again) or grew by more than a page is read afresh.
 * - Rows are newest first (one tab stop; the arrow keys move between them): time, surface, tool
 *   with its key arguments, an error badge, and an
 *   `open` badge when the call's file was open in JupyterLab as it ran (its record's `open`).
 *   A click shows the call's text exactly as the model got it; for `write` and `edit` the file
 *   is one more click away.
 * - It follows the sessions that exist (`GET dsh/api/sessions`): the picker lists them newest
 *   active first, the ones this extension makes for itself (`sessions.ts`) apart at the end. Until
 *   the person picks one it shows the newest active session and moves to a newer one as it becomes
 *   active; a picked session stays until it is deleted. No call log is asked for a session that
 *   does not exist: with none, only the list of sessions is read, once a poll.
 */

import { IDocumentManager } from '@jupyterlab/docmanager';
import { PathExt } from '@jupyterlab/coreutils';

import { ApiError, ICall, ISessionInfo, listCalls, listSessions } from './api';
import { fill, h } from './common/dom';
import { plural } from './common/format';
import { openTarget } from './open';
import { OpenFilesView, openBadge } from './openfiles';
import { orderSessions } from './sessions';

export const POLL_MS = 2000;

/** Calls read on a first look, and the most kept on screen. */
const TAIL = 50;
const KEEP = 200;
/** Newer calls asked for per poll; more than this since the last poll reads the tail afresh. */
const STEP = 100;
/** Polls between two refreshes of the session list once the person picked a session. */
const SESSIONS_EVERY = 5;

/** The status with no session to show. */
export const NO_SESSIONS = 'No agent sessions yet: the first call over REST or MCP makes one.';

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
  /** The session shown; null while none exists. */
  private session: string | null = null;
  /** The person picked `session`: it is not moved to a newer one. */
  private picked = false;
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
      id: 'dsh-sb-session',
      title: 'The session whose calls are shown: newest active first',
      onfocus: () => void this.refreshSessions(true),
      onchange: () => {
        this.picked = true;
        this.choose(this.picker.value);
      }
    });
    this.picker.append(h('option', { value: '', disabled: true }, 'No sessions yet'));
    this.picker.value = '';
    this.status = h('div', { class: 'dsh-sb-status', 'aria-live': 'polite' });
    this.list = h('div', {
      class: 'dsh-sb-calls',
      role: 'list',
      'aria-label': 'Calls, newest first',
      onkeydown: (event: KeyboardEvent) => this.onListKey(event)
    });
    this.openFiles = new OpenFilesView(docManager);
    this.node = h(
      'div',
      { class: 'dsh-sb-activity' },
      this.openFiles.node,
      h(
        'div',
        { class: 'dsh-sb-row' },
        h('label', { class: 'dsh-sb-label', for: 'dsh-sb-session' }, 'Session'),
        this.picker
      ),
      this.status,
      this.list
    );
  }

  /** Poll while shown, never while hidden. */
  setVisible(visible: boolean): void {
    window.clearInterval(this.timer);
    this.timer = undefined;
    if (visible) {
      void this.poll(false, true);
      this.timer = window.setInterval(() => void this.poll(), POLL_MS);
    }
  }

  private choose(session: string | null): void {
    if (session === this.session) {
      return;
    }
    this.session = session;
    this.generation++;
    this.busy = false;
    this.seen = 0;
    this.calls = [];
    fill(this.list);
    this.status.textContent = session === null ? NO_SESSIONS : '';
    if (session !== null) {
      void this.poll(true);
    }
  }

  /**
   * Read the sessions again: the picker lists them, and the session shown follows them (the
   * newest active one until the person picks; none once the one shown is gone). `force` redraws
   * the picker even while it has the focus (a redraw closes an open drop-down).
   */
  private async refreshSessions(force = false): Promise<void> {
    let sessions: ISessionInfo[];
    try {
      sessions = await listSessions();
    } catch {
      return; // the poll says what is wrong
    }
    this.sessions = sessions;
    const { shown, internal } = orderSessions(sessions);
    const exists = sessions.some(s => s.id === this.session);
    if (!exists) {
      this.picked = false;
    }
    const next = this.picked ? this.session : shown[0]?.id ?? (exists ? this.session : null);
    const option = (s: ISessionInfo): HTMLOptionElement =>
      h('option', { value: s.id, title: `${plural(s.calls ?? 0, 'call', 'calls')}, cwd ${s.cwd}` }, s.id);
    const ids = [...shown, ...internal].map(s => s.id).join('\n');
    if ((force || document.activeElement !== this.picker) && ids !== this.picker.dataset.ids) {
      fill(
        this.picker,
        shown.length ? shown.map(option) : h('option', { value: '', disabled: true }, 'No agent sessions yet'),
        internal.length
          ? h('optgroup', { label: "Internal: the panel's own and explorer consoles" }, ...internal.map(option))
          : null
      );
      this.picker.dataset.ids = ids;
    }
    this.choose(next);
    this.picker.value = next ?? '';
    if (next === null) {
      this.status.textContent = NO_SESSIONS;
    }
  }

  /** One poll: the session list when due (or `sessions`), then the shown session's new calls. */
  private async poll(force = false, sessions = false): Promise<void> {
    if (document.visibilityState === 'hidden') {
      return;
    }
    void this.openFiles.refresh(); // its own request, never doubled: a slow call log does not hold it
    if (this.busy && !force) {
      return;
    }
    const generation = this.generation;
    this.busy = true;
    try {
      if (sessions || (!force && (!this.picked || ++this.polls % SESSIONS_EVERY === 0))) {
        await this.refreshSessions();
        if (generation !== this.generation) {
          return; // another session is shown: choosing it polled it
        }
      }
      const session = this.session;
      if (session === null) {
        return; // no session exists: nothing to ask for
      }
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
        ? `${plural(page.total, 'call', 'calls')} in session ${session}`
        : `No calls yet in session ${session}`;
    } catch (error) {
      if (generation !== this.generation) {
        return;
      }
      if (error instanceof ApiError && error.status === 404) {
        this.status.textContent = `Session ${this.session} no longer exists`;
        void this.refreshSessions(); // it was deleted: show another
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
    // The tab stop: the newest call, unless the person is moving among the calls.
    const stop = this.list.querySelector<HTMLElement>('.dsh-sb-call-head[tabindex="0"]');
    if (!stop || !this.list.contains(document.activeElement)) {
      stop?.setAttribute('tabindex', '-1');
      this.list.querySelector<HTMLElement>('.dsh-sb-call-head')?.setAttribute('tabindex', '0');
    }
  }

  /** The calls are one tab stop: up and down, Home and End move between them. */
  private onListKey(event: KeyboardEvent): void {
    const heads = Array.from(this.list.querySelectorAll<HTMLElement>('.dsh-sb-call-head'));
    const at = heads.indexOf(event.target as HTMLElement);
    const to =
      at < 0
        ? null
        : event.key === 'ArrowDown'
          ? Math.min(at + 1, heads.length - 1)
          : event.key === 'ArrowUp'
            ? Math.max(at - 1, 0)
            : event.key === 'Home'
              ? 0
              : event.key === 'End'
                ? heads.length - 1
                : null;
    if (to === null) {
      return;
    }
    event.preventDefault();
    heads[at].tabIndex = -1;
    heads[to].tabIndex = 0;
    heads[to].focus();
  }

  private row(call: ICall): HTMLElement {
    const detail = h('div', { class: 'dsh-sb-call-detail', hidden: true });
    const head = h(
      'div',
      {
        class: 'dsh-sb-call-head',
        role: 'button',
        tabindex: -1, // the list's one tab stop is set by add() and the arrow keys
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
