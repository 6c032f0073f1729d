// The open thread's subagent tree: nesting by parent, label, status (running with its elapsed
// time, idle, waiting on the user, settled) and diagnostics for children that cannot be read.
// Filled from the `subagent/*` notifications: those that state the tree when the thread is
// followed (`seq: null`), then those of its changes; the elapsed time ticks in the page, the
// server is never polled.

import { el, short } from "./dom.js";

export class Tree {
  constructor(list, select) {
    this.list = list;
    this.select = select; // called with a node's id when it is chosen
    this.timer = setInterval(() => this.tick(), 1000);
    this.reset(null, null);
  }

  reset(rootId, rootLabel) {
    this.rootId = rootId;
    this.rootLabel = rootLabel;
    this.nodes = new Map();
    this.selected = rootId;
    this.render();
  }

  // The diagnostic rows of subagent/list (children whose logs cannot be read: the feed
  // states only the readable ones).
  diagnostics(rows) {
    for (const row of rows ?? []) {
      if (row?.kind !== "diagnostic" || typeof row.id !== "string") continue;
      const node = this.node(row.id);
      node.parent = node.parent ?? row.parent ?? this.rootId;
      node.diagnostic = String(row.reason ?? "unreadable");
    }
    this.render();
  }

  started(params) {
    const node = this.node(params.subagentId);
    node.parent = params.parentId ?? node.parent ?? this.rootId;
    node.label = params.label ?? node.label;
    node.depth = params.depth ?? node.depth;
    if (!node.status) this.setStatus(node, "running");
    this.changed();
  }

  status(params) {
    this.setStatus(this.node(params.subagentId), params.status);
    this.changed();
  }

  // Drawn again once per frame, however many events came in it (a follow states a tree of
  // 100 children in 200 of them).
  changed() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  node(id) {
    if (!this.nodes.has(id)) this.nodes.set(id, { id, parent: null, label: null, depth: null, status: null, since: null, diagnostic: null });
    return this.nodes.get(id);
  }

  setStatus(node, status) {
    if (status === "running" && node.status !== "running") node.since = Date.now();
    node.status = typeof status === "string" ? status : "unknown";
  }

  label(id) {
    return id === this.rootId ? this.rootLabel : this.nodes.get(id)?.label;
  }

  render() {
    const children = new Map();
    for (const node of this.nodes.values()) {
      const parent = this.nodes.has(node.parent) ? node.parent : this.rootId;
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(node);
    }
    const focused = document.activeElement?.dataset?.node;
    this.list.replaceChildren();
    if (!this.rootId) return;
    const root = { id: this.rootId, label: this.rootLabel ?? "root", status: null };
    this.list.append(this.item(root, children, new Set()));
    if (focused) this.list.querySelector(`[data-node="${CSS.escape(focused)}"]`)?.focus();
  }

  item(node, children, seen) {
    seen.add(node.id);
    const state = node.diagnostic ? "diagnostic" : node.status ?? "";
    const button = el(
      "button",
      { type: "button", class: "node", dataset: { node: node.id }, "aria-current": this.selected === node.id ? "true" : null, onclick: () => this.select(node.id) },
      el("span", { class: "label" }, node.label ?? (node.id === this.rootId ? "root" : "subagent")),
      el("span", { class: "id" }, short(node.id)),
      el("span", { class: "state " + state, dataset: { since: node.status === "running" ? node.since : "" } }, this.stateText(node)),
    );
    const item = el("li", { role: "treeitem", "aria-selected": this.selected === node.id ? "true" : "false", dataset: { status: state } }, button);
    const below = (children.get(node.id) ?? []).filter((child) => !seen.has(child.id));
    if (below.length) {
      item.setAttribute("aria-expanded", "true");
      item.append(el("ul", { role: "group" }, ...below.map((child) => this.item(child, children, seen))));
    }
    return item;
  }

  stateText(node) {
    if (node.diagnostic) return `diagnostic: ${node.diagnostic}`;
    if (node.status === "running" && node.since) return `running ${elapsed(Date.now() - node.since)}`;
    return node.status ?? "";
  }

  tick() {
    for (const span of this.list.querySelectorAll(".state.running")) {
      const since = Number(span.dataset.since);
      if (since) span.textContent = `running ${elapsed(Date.now() - since)}`;
    }
  }

  choose(id) {
    this.selected = id;
    this.render();
  }
}

function elapsed(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}
