// Building elements from data: text is only ever set as text (textContent), never as markup.

// CSI and OSC escape sequences, then any other control character but newline and tab.
const ESCAPES = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

export function clean(text) {
  return String(text ?? "").replace(ESCAPES, "").replace(CONTROLS, "\ufffd");
}

// el("li", {class: "x", dataset: {id: "1"}}, "text", child, …)
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? clean(child) : child);
  }
  return node;
}

export function short(id) {
  const text = String(id ?? "");
  return text.length > 14 ? text.slice(0, 13) + "…" : text;
}

export function compact(value, limit = 200) {
  let text;
  try {
    text = JSON.stringify(value ?? {});
  } catch {
    text = String(value);
  }
  return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
}

export function firstLine(text, limit = 200) {
  const line = clean(text).split("\n", 1)[0];
  return line.length > limit ? line.slice(0, limit - 1) + "…" : line;
}
