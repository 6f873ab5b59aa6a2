/**
 * The "Workspace" panel in JupyterLab's left area (`dsh-jupyter:sidebar`): the dsh tools
 * through the REST API, in sections picked by a tab strip. Each section is a plain DOM view;
 * this file only puts them in one Lumino widget and tells them when they are shown or hidden.
 */

import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { ActivityView } from './activity';
import { fill, h } from './common/dom';
import { ExplorerView } from './explorer';
import { SearchView } from './search';

export const SIDEBAR_ID = 'dsh-jupyter:sidebar';

/** The session the panel's own calls (searches, listings) are logged in. */
export const SIDEBAR_SESSION = 'jupyterlab-sidebar';

/** Where the panel sits among the left area's tabs (file browser 100, running 200, TOC 400). */
const RANK = 650;

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M3 5h7l2 2h9v12H3z" opacity=".35"/>
  <circle class="jp-icon3" cx="14" cy="13" r="3.2" fill="none" stroke="#616161" stroke-width="1.8"/>
  <path class="jp-icon3" fill="#616161" d="M16.3 15.2l1.3-1.3 3.6 3.6-1.3 1.3z"/>
</svg>`;

export const sidebarIcon = new LabIcon({ name: 'dsh-jupyter:workspace', svgstr: ICON_SVG });

/** One section of the panel. */
export interface ISection {
  readonly label: string;
  /** The tab's tooltip. */
  readonly caption?: string;
  readonly node: HTMLElement;
  /** The section became visible (true) or hidden (false), the panel included. */
  setVisible?(visible: boolean): void;
}

export class WorkspacePanel extends Widget {
  private current = 0;
  private readonly tabs: HTMLButtonElement[];
  private readonly body: HTMLElement;

  constructor(private readonly sections: ISection[]) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('dsh-sb');
    this.title.icon = sidebarIcon;
    this.title.caption = 'Workspace (dsh): search, agent activity, explorer';
    this.tabs = sections.map((section, i) =>
      h(
        'button',
        {
          class: 'dsh-sb-tab',
          role: 'tab',
          title: section.caption,
          'aria-selected': String(i === 0),
          onclick: () => this.select(i)
        },
        section.label
      )
    );
    this.body = h('div', { class: 'dsh-sb-body' });
    fill(
      this.node,
      h('div', { class: 'dsh-sb-title' }, 'Workspace'),
      h('div', { class: 'dsh-sb-tabs', role: 'tablist' }, ...this.tabs),
      this.body
    );
    fill(this.body, sections[0]?.node);
  }

  select(index: number): void {
    if (index === this.current) {
      return;
    }
    this.sections[this.current].setVisible?.(false);
    this.current = index;
    this.tabs.forEach((tab, i) => tab.setAttribute('aria-selected', String(i === index)));
    fill(this.body, this.sections[index].node);
    this.sections[index].setVisible?.(this.isVisible);
  }

  protected onAfterShow(): void {
    this.sections[this.current].setVisible?.(true);
  }

  protected onAfterHide(): void {
    this.sections[this.current].setVisible?.(false);
  }

  protected onAfterAttach(): void {
    this.sections[this.current].setVisible?.(this.isVisible);
  }

  protected onBeforeDetach(): void {
    this.sections[this.current].setVisible?.(false);
  }
}

export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dsh-jupyter-shim:sidebar',
  description:
    'The Workspace panel in the left area: search, agent activity and an explorer through the dsh REST API.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ILabShell, IDefaultFileBrowser],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    labShell: ILabShell | null,
    browser: IDefaultFileBrowser | null
  ): void => {
    if (!labShell) {
      return; // Notebook 7 has no left area of this kind
    }
    const search = new SearchView(docManager, SIDEBAR_SESSION);
    const activity = new ActivityView(docManager);
    const explorer = new ExplorerView(docManager, SIDEBAR_SESSION, browser);
    const panel = new WorkspacePanel([
      { label: 'Search', node: search.node },
      {
        label: 'Activity',
        caption: "Agent activity: a session's calls as they happen, beside the files open in JupyterLab",
        node: activity.node,
        setVisible: v => activity.setVisible(v)
      },
      { label: 'Explorer', node: explorer.node, setVisible: v => explorer.setVisible(v) }
    ]);
    app.shell.add(panel, 'left', { rank: RANK });
  }
};
