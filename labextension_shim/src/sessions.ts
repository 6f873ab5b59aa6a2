/**
 * Which dsh sessions the activity offers, and in what order: a pure function of
 * `GET dsh/api/sessions`.
 *
 * Why it exists: the activity follows the sessions that exist, the newest active first, and keeps
 * the sessions this extension makes for its own work (the panel's searches and listings, each
 * explorer console's) apart from the ones agents and people use. It never asks the server and
 * never touches the DOM.
 */

import type { ISessionInfo } from './api';

/** The session the panel's own calls (searches, listings) are logged in. */
export const SIDEBAR_SESSION = 'jupyterlab-sidebar';

/** An explorer console's session: `explorer-` and 8 hex digits of its folder (index.ts). */
const EXPLORER_SESSION = /^explorer-[0-9a-f]{8}$/;

/** A session this extension makes for its own work, not one an agent or a person chose. */
export function isInternal(id: string): boolean {
  return id === SIDEBAR_SESSION || EXPLORER_SESSION.test(id);
}

/** When a session was last active: its newest call's start, else its creation. */
export function lastActive(session: ISessionInfo): number {
  return session.lastCall ?? session.created ?? 0;
}

/** The sessions newest active first (ties by id), the internal ones apart. */
export function orderSessions(sessions: ISessionInfo[]): { shown: ISessionInfo[]; internal: ISessionInfo[] } {
  const ordered = [...sessions].sort((a, b) => lastActive(b) - lastActive(a) || a.id.localeCompare(b.id));
  return {
    shown: ordered.filter(s => !isInternal(s.id)),
    internal: ordered.filter(s => isInternal(s.id))
  };
}
