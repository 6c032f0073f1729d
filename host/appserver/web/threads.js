// The list of threads (roots): newest first, shown a page at a time, each with its label, its
// start time, and whether this page follows it live.

import { el, short } from "./dom.js";

const PAGE = 50;

export class Threads {
  constructor(list, more, open) {
    this.list = list;
    this.more = more;
    this.open = open; // called with a thread's id when it is chosen
    this.threads = [];
    this.shown = 0;
    this.live = new Set();
    this.current = null;
    more.addEventListener("click", () => this.show());
  }

  set(threads) {
    this.threads = [...threads].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0));
    this.shown = 0;
    this.list.replaceChildren();
    this.show();
  }

  show() {
    const next = this.threads.slice(this.shown, this.shown + PAGE);
    this.shown += next.length;
    this.list.append(...next.map((thread) => this.row(thread)));
    this.more.hidden = this.shown >= this.threads.length;
  }

  find(id) {
    return this.threads.find((thread) => thread.id === id);
  }

  add(thread) {
    this.threads.unshift(thread);
    this.shown += 1;
    this.live.add(thread.id);
    this.list.prepend(this.row(thread));
  }

  row(thread) {
    const when = thread.createdAt ? new Date(Number(thread.createdAt) / 1e6).toLocaleString() : "";
    return el(
      "li", { dataset: { thread: thread.id } },
      el("button", { type: "button", class: "thread", onclick: () => this.open(thread.id) },
        el("span", { class: "label" }, thread.label ?? "thread"),
        el("span", { class: "id" }, short(thread.id)),
        el("span", { class: "when" }, when),
        el("span", { class: "stored" }, "stored")),
    );
  }

  // The open thread marked current, and each row live or stored.
  mark(current) {
    this.current = current;
    for (const row of this.list.children) {
      const id = row.dataset.thread;
      const live = this.live.has(id);
      row.querySelector("button").setAttribute("aria-current", current === id ? "true" : "false");
      const mark = row.querySelector(".live, .stored");
      mark.className = live ? "live" : "stored";
      mark.textContent = live ? "live" : "stored";
    }
  }

  rename(id, label) {
    const thread = this.find(id);
    if (thread) thread.label = label;
    const row = this.list.querySelector(`[data-thread="${CSS.escape(id)}"] .label`);
    if (row) row.textContent = label;
  }
}
