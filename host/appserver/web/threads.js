// The list of threads (roots), the most recently active first, as thread/list pages them:
// each with its label, its last activity, and whether it is live (in the server, or followed
// by this page) or only stored.

import { el, short } from "./dom.js";

export class Threads {
  constructor(list, more, open, next) {
    this.list = list;
    this.more = more;
    this.open = open; // called with a thread's id when it is chosen
    this.threads = [];
    this.cursor = null; // where the next page starts (thread/list's nextCursor)
    this.live = new Set();
    this.current = null;
    more.addEventListener("click", next);
  }

  // A page of thread/list: the first one replaces the list, a later one (`more`) extends it.
  put(threads, cursor, more) {
    if (!more) {
      this.threads = [];
      this.list.replaceChildren();
    }
    const known = new Set(this.threads.map((thread) => thread.id));
    const fresh = threads.filter((thread) => thread && typeof thread.id === "string" && !known.has(thread.id));
    for (const thread of fresh) if (thread.live) this.live.add(thread.id);
    this.threads.push(...fresh);
    this.list.append(...fresh.map((thread) => this.row(thread)));
    this.cursor = cursor;
    this.more.hidden = cursor === null;
  }

  find(id) {
    return this.threads.find((thread) => thread.id === id);
  }

  add(thread) {
    this.threads.unshift(thread);
    this.live.add(thread.id);
    this.list.prepend(this.row(thread));
  }

  row(thread) {
    const moment = thread.lastActivity ?? thread.createdAt;
    const when = moment ? new Date(Number(moment) / 1e6).toLocaleString() : "";
    return el(
      "li", { dataset: { thread: thread.id } },
      el("button", { type: "button", class: "thread", onclick: () => this.open(thread.id) },
        el("span", { class: "label" }, thread.label ?? "thread"),
        el("span", { class: "id" }, short(thread.id)),
        el("span", { class: "when", title: "last activity" }, when),
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
