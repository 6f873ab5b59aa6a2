/**
 * This page's line to the dsh server's tab routes (`<base_url>dsh/api/tabs/{page}`): reports of
 * what its tabs have open, the long poll for the server's requests, the answers, and the beacon
 * that says the page is going away. The page id is made here, once per page load, from
 * `crypto.getRandomValues` (it works on plain http too, where `randomUUID` does not).
 *
 * Requests go through `ServerConnection` with Jupyter's own authentication (token, XSRF header);
 * the beacon can set no header, so it carries the `_xsrf` cookie's value as a query argument, as
 * Jupyter accepts for a form. Nothing here decides anything: tabs.ts does.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

const ROUTE = 'dsh/api/tabs';

/** One document this page has open, as reported. */
export interface IOpenDocument {
  path: string;
  kind: 'file' | 'notebook';
  dirty: boolean;
  tabs: number;
}

/** A request of the server's (see docs/server.md, "Open tabs"). */
export interface IPageRequest {
  id: string;
  seq: number;
  type: 'take' | 'save' | 'saved' | 'undo' | 'moved';
  path?: string;
  notebook?: boolean;
  content?: string;
  save?: boolean;
  take?: string;
  expect?: { hash?: string | null; hash_algorithm?: string | null; last_modified?: string | null };
  model?: Record<string, any>;
  from?: string;
  to?: string;
  moves?: { from: string; to: string }[];
}

/** A page's answer to one request. */
export interface IAnswer {
  status: 'taken' | 'saved' | 'unsaved' | 'changed' | 'busy' | 'gone' | 'failed' | 'done';
  canSave?: boolean;
  exact?: boolean;
  model?: Record<string, any>;
  message?: string;
}

/** What a poll found: requests, or that the server does not know this page (report it again). */
export type PollResult = IPageRequest[] | 'unknown';

/** An answer that tells the page to stop: the server has no tab routes (404 without a code). */
export class NoTabRoutes extends Error {}

export function newPageId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}

export class PageLink {
  readonly id = newPageId();
  private settings = ServerConnection.makeSettings();

  private url(...parts: string[]): string {
    return URLExt.join(this.settings.baseUrl, ROUTE, this.id, ...parts);
  }

  private async send(method: string, url: string, body?: unknown): Promise<{ status: number; data: any }> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
    }
    const response = await ServerConnection.makeRequest(url, init, this.settings);
    let data: any = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    return { status: response.status, data };
  }

  /** Tell the server what this page has open (it replaces the last report). */
  async report(documents: IOpenDocument[]): Promise<void> {
    const { status, data } = await this.send('POST', this.url(), { documents });
    if (status === 404 && !data?.code) {
      throw new NoTabRoutes('the server has no dsh tab routes');
    }
    if (status !== 200) {
      throw new Error(`report: ${status} ${data?.message ?? ''}`);
    }
  }

  /** The server's requests numbered above `after`; waits on the server up to its poll period. */
  async poll(after: number): Promise<PollResult> {
    const { status, data } = await this.send('GET', this.url('requests') + `?after=${after}`);
    if (status === 404) {
      return 'unknown';
    }
    if (status !== 200 || !Array.isArray(data?.requests)) {
      throw new Error(`poll: ${status} ${data?.message ?? ''}`);
    }
    return data.requests as IPageRequest[];
  }

  /** Answer one request; whether the server still waited for it. */
  async answer(request: IPageRequest, answer: IAnswer): Promise<boolean> {
    const { status, data } = await this.send('POST', this.url('answers'), { request: request.id, ...answer });
    return status === 200 && data?.accepted === true;
  }

  /** Say, as the page goes away, that it has nothing open any more (best effort, no reply). */
  beacon(): void {
    const xsrf = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]*)/)?.[1];
    const url = this.url() + (xsrf ? `?_xsrf=${encodeURIComponent(xsrf)}` : '');
    try {
      navigator.sendBeacon(url, new Blob([JSON.stringify({ gone: true })], { type: 'text/plain' }));
    } catch {
      // the server forgets the page after three quiet poll periods anyway
    }
  }
}
