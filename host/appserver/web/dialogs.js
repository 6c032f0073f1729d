// Requests to the user (`approval/request`, `userInput/request`), one dialog at a time, oldest
// first: who asks (label, depth), the tool and its arguments or the question and its choices.
// A decision announced by `approval/decided` (another client, a terminal, a timeout) closes
// the dialog of that request; so does a lost connection (the server asks again after it).

import { el, short } from "./dom.js";

export class Dialogs {
  constructor(answer) {
    this.answer = answer; // (serverRequestId, result) → sent?
    this.queue = [];
    this.dialog = document.getElementById("ask");
    this.dialog.addEventListener("cancel", (event) => event.preventDefault());
    // Chromium closes a dialog on a repeated Escape even so: an undecided request reopens it.
    this.dialog.addEventListener("close", () => {
      if (this.queue.length) this.show();
    });
    document.getElementById("ask-form").addEventListener("submit", (event) => event.preventDefault());
  }

  asked(id, method, params) {
    this.queue.push({ id, method, params });
    if (this.queue.length === 1) this.show();
  }

  decided(requestId) {
    const index = this.queue.findIndex((entry) => entry.params.requestId === requestId);
    if (index < 0) return;
    this.queue.splice(index, 1);
    if (index === 0) this.show();
  }

  clear() {
    this.queue = [];
    this.show();
  }

  show() {
    const entry = this.queue[0];
    if (!entry) {
      if (this.dialog.open) this.dialog.close();
      return;
    }
    const { method, params } = entry;
    const origin = params.origin ?? {};
    const question = method === "userInput/request";
    document.getElementById("ask-title").textContent = question ? "A question" : `Allow ${String(params.tool ?? "a tool")}?`;
    document.getElementById("ask-origin").textContent = `asked by ${origin.label ?? short(origin.agentId) ?? "the agent"} (depth ${origin.depth ?? 0})`;
    const body = document.getElementById("ask-body");
    body.textContent = question ? String(params.question ?? "") : `${String(params.tool ?? "")} ${JSON.stringify(params.arguments ?? {}, null, 2)}`;
    const text = document.getElementById("ask-text");
    text.value = "";
    document.getElementById("ask-text-label").textContent = question ? "Answer, or a reason to decline" : "Reason (optional, for deny)";
    const choices = document.getElementById("ask-choices");
    choices.replaceChildren(...(question && Array.isArray(params.choices) ? params.choices : []).map((choice) => this.button(String(choice), { answer: String(choice) })));
    const buttons = document.getElementById("ask-buttons");
    if (question) {
      buttons.replaceChildren(
        this.button("Answer", () => (text.value.trim() ? { answer: text.value } : null)),
        this.button("Decline", () => ({ decline: true, reason: text.value.trim() || undefined })),
      );
    } else {
      buttons.replaceChildren(
        this.button("Approve", { decision: "approve" }),
        this.button("Approve for session", { decision: "approveForSession" }),
        this.button("Deny", () => ({ decision: "deny", reason: text.value.trim() || undefined })),
      );
    }
    if (!this.dialog.open) this.dialog.showModal();
    (choices.querySelector("button") ?? buttons.querySelector("button")).focus();
  }

  button(label, result) {
    return el("button", {
      type: "button",
      onclick: () => {
        const value = typeof result === "function" ? result() : result;
        const entry = this.queue[0];
        if (!value || !entry) return;
        if (this.answer(entry.id, value)) this.decided(entry.params.requestId);
      },
    }, label);
  }
}
