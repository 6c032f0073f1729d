// One session's transcript: stored items in order, the root's streamed text as it arrives,
// each tool call on one line with its result or error, reports and settlement notices marked.
// Items are counted once by their stored place (session, seq, type, id): a replay after a
// reconnect, or a live item that came while the stored ones were read, is not shown twice.

import { clean, compact, el, firstLine, short } from "./dom.js";

export class Transcript {
  constructor(list, names) {
    this.list = list;
    this.names = names; // id → label, for notices from subagents
    this.reset(null);
  }

  reset(sessionId) {
    this.sessionId = sessionId;
    this.seen = new Set();
    this.calls = new Map();
    this.streams = new Map();
    this.lastSeq = -1;
    this.list.replaceChildren();
  }

  // Items read or notified, in order; the scroll follows the end when it was at the end.
  add(items) {
    const atEnd = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 40;
    const batch = document.createDocumentFragment();
    for (const item of items) this.addOne(item, batch);
    this.list.append(batch);
    if (atEnd) this.list.scrollTop = this.list.scrollHeight;
  }

  addOne(item, batch) {
    if (!item || typeof item !== "object") return;
    if (item.sessionId && this.sessionId && item.sessionId !== this.sessionId) return; // another session's
    const key = `${item.sessionId ?? this.sessionId}:${item.seq}:${item.type}:${item.id}`;
    if (item.seq !== null && item.seq !== undefined) {
      if (this.seen.has(key)) return;
      this.seen.add(key);
      if (item.seq > this.lastSeq) this.lastSeq = item.seq;
    }
    if (item.type === "toolResult" && this.attach(item)) return;
    const row = this.row(item);
    if (item.type === "toolCall") this.calls.set(item.id, row);
    batch.append(row);
  }

  row(item) {
    const kind = String(item.type);
    const row = el("li", { class: "item " + kind.replace(/[^A-Za-z]/g, ""), dataset: { seq: item.seq ?? "" } });
    switch (kind) {
      case "userMessage":
        row.append(el("span", { class: "who" }, item.subagentId ? `from ${this.name(item.subagentId)}` : "you"), el("div", { class: "text" }, item.text));
        break;
      case "agentMessage":
        row.append(el("div", { class: "text" }, item.text));
        break;
      case "toolCall":
        row.append(el("span", { class: "call" }, `→ ${clean(item.name)} ${compact(item.arguments)}`));
        break;
      case "toolResult":
        row.append(this.result(item));
        break;
      case "subagentReport":
        row.append(el("span", { class: "mark" }, `report from ${this.name(item.subagentId)}`), el("div", { class: "text" }, item.text));
        break;
      case "subagentSettled":
        row.append(el("span", { class: "mark" }, `settled: ${this.name(item.subagentId)}`), el("div", { class: "text" }, item.text));
        break;
      default:
        row.append(el("span", { class: "mark" }, kind), el("div", { class: "text" }, item.text ?? compact(item)));
    }
    return row;
  }

  result(item) {
    const text = item.text ?? compact(item.structured);
    const span = el("span", { class: item.isError ? "result error" : "result" }, (item.isError ? " ✗ error: " : " ✓ ") + firstLine(text));
    span.title = clean(text).slice(0, 2000);
    return span;
  }

  // A result joins the line of its call.
  attach(item) {
    const row = this.calls.get(item.callId);
    if (!row) return false;
    this.calls.delete(item.callId);
    row.querySelector(".progress")?.remove();
    row.append(this.result(item));
    return true;
  }

  // A running call's latest progress, under its line until its result lands.
  progress(itemId, params) {
    const row = this.calls.get(itemId);
    if (!row) return;
    const counted = typeof params.progress === "number" ? `${params.progress}${typeof params.total === "number" ? ` of ${params.total}` : ""}` : "";
    let line = row.querySelector(".progress");
    if (!line) {
      line = el("div", { class: "progress" });
      row.append(line);
    }
    line.textContent = clean(params.message || counted);
  }

  name(id) {
    const label = this.names.get(id);
    return label ? `${label} (${short(id)})` : short(id) || "a subagent";
  }

  // Streamed text: a row that grows, replaced by the stored item that names its stream. A
  // stored item's own item/started (it has a seq) adds nothing: its item/completed follows.
  started(item) {
    if (!item || item.type !== "agentMessage" || this.streams.has(item.id)) return;
    if (item.seq !== null && item.seq !== undefined) return;
    const text = el("div", { class: "text" }, item.text ?? "");
    const row = el("li", { class: "item agentMessage streaming" }, text);
    this.streams.set(item.id, text);
    this.add([]);
    this.list.append(row);
  }

  delta(streamId, piece) {
    const text = this.streams.get(streamId);
    if (!text) return;
    text.append(clean(piece));
    this.list.scrollTop = this.list.scrollHeight;
  }

  completed(item, streamId) {
    const text = streamId ? this.streams.get(streamId) : null;
    if (text) {
      this.streams.delete(streamId);
      text.closest("li").remove();
    }
    this.add([item]);
  }

  // The session was read up to `seq` (its last events may be no items: a turn's end).
  reached(seq) {
    if (seq > this.lastSeq) this.lastSeq = seq;
  }

  // Half-streamed rows removed (the connection was lost: their stored items come in the replay).
  dropStreams() {
    for (const text of this.streams.values()) text.closest("li").remove();
    this.streams.clear();
  }

  // A turn's end (once for its seq: a follow again may replay one just heard live).
  marker(text, seq) {
    if (typeof seq === "number") {
      if (this.seen.has(`turn:${seq}`)) return;
      this.seen.add(`turn:${seq}`);
    }
    this.list.append(el("li", { class: "item marker turn" }, text));
  }
}
