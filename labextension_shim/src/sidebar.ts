/**
 * The "Workspace" panel in JupyterLab's left area (`dsh-jupyter:sidebar`): the dsh tools
 * through the REST API, in sections picked by a tab strip. Each section is a plain DOM view;
 * this file only puts them in one Lumino widget, tells them when they are shown or hidden, and
 * adds the command that opens the panel (`dsh-jupyter:open-panel`, also a notebook's link) and
 * "Go to File…" (`dsh-jupyter:go-to-file`, `gotofile.ts`; its key, Ctrl+Alt+P, is in the plugin's
 * settings schema, `schema/sidebar.json`, so that a person can change it).
 *
 * The panel is a labelled region; its strip follows the ARIA tabs pattern (role tab with
 * `aria-controls`, role tabpanel labelled by its tab, arrow keys between tabs, one tab stop).
 * It sits right under the file browser, with JupyterLab's own search icon.
 */

import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ICommandPalette } from '@jupyterlab/apputils';
import { searchIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { ActivityView } from './activity';
import { fill, h } from './common/dom';
import { ExplorerView } from './explorer';
import { GO_TO_FILE, GoToFile } from './gotofile';
import { SearchView } from './search';
import { SIDEBAR_SESSION } from './sessions';

export { SIDEBAR_SESSION };

export const SIDEBAR_ID = 'dsh-jupyter:sidebar';

/** The command that shows the panel (a stable id: notebook 01 links to it). */
export const OPEN_PANEL = 'dsh-jupyter:open-panel';

/**
 * Where the panel sits among the left area's tabs: right under the file browser (100), before
 * the running sessions (200), the collaborators (300) and the table of contents (400).
 */
const RANK = 150;

/** The panel's icon: JupyterLab's own, so it draws with every font and theme. */
export const sidebarIcon = searchIcon;

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
  private readonly panels: HTMLElement[];
  private readonly body: HTMLElement;

  constructor(private readonly sections: ISection[]) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('dsh-sb');
    this.title.icon = sidebarIcon;
    this.title.caption = 'Workspace (dsh): search, agent activity, explorer';
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'Workspace: search, agent activity and explorer');
    const key = (section: ISection): string => section.label.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    this.tabs = sections.map((section, i) =>
      h(
        'button',
        {
          class: 'dsh-sb-tab',
          role: 'tab',
          id: `dsh-sb-tab-${key(section)}`,
          'aria-controls': `dsh-sb-tabpanel-${key(section)}`,
          title: section.caption,
          'aria-selected': String(i === 0),
          tabindex: i === 0 ? 0 : -1,
          onclick: () => this.select(i),
          onkeydown: (event: KeyboardEvent) => this.onTabKey(event, i)
        },
        section.label
      )
    );
    // Each section in its own tabpanel; only the current one is in the page.
    this.panels = sections.map(section =>
      h(
        'div',
        {
          class: 'dsh-sb-tabpanel',
          role: 'tabpanel',
          id: `dsh-sb-tabpanel-${key(section)}`,
          'aria-labelledby': `dsh-sb-tab-${key(section)}`
        },
        section.node
      )
    );
    this.body = h('div', { class: 'dsh-sb-body' });
    fill(
      this.node,
      h('div', { class: 'dsh-sb-title', 'aria-hidden': 'true' }, 'Workspace'),
      h('div', { class: 'dsh-sb-tabs', role: 'tablist', 'aria-label': 'Workspace sections' }, ...this.tabs),
      this.body
    );
    fill(this.body, this.panels[0]);
  }

  select(index: number): void {
    if (index === this.current) {
      return;
    }
    this.sections[this.current].setVisible?.(false);
    this.current = index;
    this.tabs.forEach((tab, i) => {
      tab.setAttribute('aria-selected', String(i === index));
      tab.tabIndex = i === index ? 0 : -1;
    });
    fill(this.body, this.panels[index]);
    this.sections[index].setVisible?.(this.isVisible);
  }

  /** The tabs pattern's keys: left and right (wrapping), Home and End move to a tab and show it. */
  private onTabKey(event: KeyboardEvent, index: number): void {
    const last = this.tabs.length - 1;
    const to =
      event.key === 'ArrowRight'
        ? (index + 1) % this.tabs.length
        : event.key === 'ArrowLeft'
          ? (index + last) % this.tabs.length
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (to === null) {
      return;
    }
    event.preventDefault();
    this.select(to);
    this.tabs[to].focus();
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
  optional: [ILabShell, IDefaultFileBrowser, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    labShell: ILabShell | null,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null
  ): void => {
    const goToFile = new GoToFile(docManager, SIDEBAR_SESSION);
    app.commands.addCommand(GO_TO_FILE, {
      label: 'Go to File…',
      caption: 'Find a file in the workspace by a fragment of its path (find), and open it',
      execute: () => goToFile.open()
    });
    palette?.addItem({ command: GO_TO_FILE, category: 'dsh-jupyter' });
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
    app.commands.addCommand(OPEN_PANEL, {
      label: 'Open the Workspace Panel (dsh)',
      caption: 'Show the Workspace panel in the left area: search, agent activity and explorer',
      icon: args => (args['isPalette'] ? undefined : sidebarIcon),
      execute: () => {
        labShell.expandLeft();
        app.shell.activateById(SIDEBAR_ID);
      }
    });
    palette?.addItem({ command: OPEN_PANEL, category: 'dsh-jupyter' });
  }
};
