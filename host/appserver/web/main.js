// The web console: threads, the open thread's transcript and subagent tree, the composer, and
// requests to the user, all over the app-server protocol (docs/app-server.md). The token comes
// in the URL's fragment (#token=…), is kept in this tab only (sessionStorage) and taken out of
// the address bar at once.

import { Composer } from "./composer.js";
import { Dialogs } from "./dialogs.js";
import { el, short } from "./dom.js";
import { Rpc } from "./rpc.js";
import { Threads } from "./threads.js";
import { Transcript } from "./transcript.js";
import { Tree } from "./tree.js";

const $ = (id) => document.getElementById(id);
const READ_PAGE = 500;
const LIST_PAGE = 50;

const state = {
  rpc: null,
  root: null, // {id, label, readOnly}
  rootSeq: -1,
  viewing: null, // the session whose transcript is shown
  loading: null, // notifications for the viewed session held while it is read
  shown: 0, // counts the views begun: a read for an earlier one stops
  readUpTo: -1, // the turns stored up to this seq were read, not shown as they end (null: not known yet)
  running: false,
  starting: false, // a new thread is being started: nothing typed may go to the open one
};

const names = new Map();
const list = new Threads($("thread-list"), $("more-threads"), (id) => open(id), () => loadThreads(true));
const transcript = new Transcript($("transcript"), names);
const tree = new Tree($("tree"), (id) => view(id));
const dialogs = new Dialogs((id, result) => state.rpc.answer(id, result));
const composer = new Composer(state, (line) => error(line));
const controls = () => composer.controls();

function token() {
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (found) {
    let secret = found[1];
    try {
      secret = decodeURIComponent(secret);
    } catch {
      // not percent-encoded after all: taken as it is
    }
    sessionStorage.setItem("agent-host.token", secret);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem("agent-host.token");
}

function connect(secret) {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
  state.rpc = new Rpc(url, secret, { opened, lost, refused, bad: error, notify, ask });
  state.rpc.start();
}

// The server's own requests: the two the page answers, and a refusal for any other.
function ask(id, method, params) {
  if (method === "approval/request" || method === "userInput/request") dialogs.asked(id, method, params);
  else state.rpc.send({ id, error: { code: -32601, message: `the console does not answer ${String(method)}` } });
}

function login(message) {
  $("console").hidden = true;
  $("login").hidden = false;
  $("login-message").textContent = message;
  $("status").textContent = "not connected";
  $("login-token").focus();
}

// An attempt that never opened: the server answers its probe, so it refused the token (it makes
// a new one each start) or the page's origin; or it does not answer, and the page goes on trying.
async function refused() {
  let up = false;
  try {
    up = (await fetch("/readyz", { cache: "no-store" })).ok;
  } catch {
    up = false;
  }
  if (up) {
    state.rpc.stop();
    $("banner").hidden = true;
    login("The server refused the connection (token or origin). Open the console's URL that agent-host printed (it ends in #token=…), or paste the token from ~/.agent-host/app-server.token.");
  } else {
    $("banner").hidden = false;
    $("banner").textContent = "The server does not answer: retrying…";
    $("status").textContent = "not connected";
  }
}

function lost() {
  $("banner").hidden = false;
  $("banner").textContent = "Connection lost: reconnecting…";
  $("status").textContent = "reconnecting…";
  dialogs.clear();
  transcript.dropStreams(); // the replay brings their stored answers, naming no stream
}

async function opened(first) {
  const capabilities = { approvals: true, userInput: true };
  try {
    await state.rpc.request("initialize", { clientInfo: { name: "agent-host web console", version: "1" }, capabilities });
    state.rpc.notify("initialized");
    $("login").hidden = true;
    $("console").hidden = false;
    $("status").textContent = "connected";
    if (first) await loadThreads();
    await rejoin();
    $("banner").hidden = true;
  } catch (failure) {
    if (state.rpc.socket?.readyState === WebSocket.OPEN) error(failure.message);
  }
}

// After a lost connection: the open thread again from the last seq seen (the follow states
// the tree as it is now), and the viewed transcript read again if the loss cut its read (its
// notifications are held until a read ends).
async function rejoin() {
  if (!state.root) return;
  await follow(state.root.id, state.rootSeq);
  if (state.viewing !== state.root.id) await state.rpc.request("thread/subscribe", { threadId: state.viewing, afterSeq: transcript.lastSeq });
  if (state.loading !== null) await read(state.viewing, state.shown);
}

function error(line) {
  const list = $("errors");
  list.append(el("li", {}, String(line)));
  while (list.children.length > 5) list.firstElementChild.remove();
}

// -- threads ---------------------------------------------------------------------------------

// The first page of threads (the most recently active first), or with `more` the next one.
async function loadThreads(more = false) {
  try {
    const params = more ? { cursor: list.cursor, limit: LIST_PAGE } : { limit: LIST_PAGE };
    const page = await state.rpc.request("thread/list", params);
    list.put(page.threads ?? [], page.nextCursor ?? null, more);
    list.mark(state.root?.id ?? null);
  } catch (failure) {
    error(failure.message);
  }
}

async function newThread() {
  state.starting = true;
  controls();
  try {
    const result = await state.rpc.request("thread/start", {});
    list.add(result.thread);
    await open(result.thread.id, result.thread);
  } catch (failure) {
    error(failure.message);
  } finally {
    state.starting = false;
    controls();
  }
}

// -- the open thread ---------------------------------------------------------------------------

// Follow the thread (whether a turn runs, then its tree as the follow states it), paint the
// tree, then read its stored transcript (the live items meanwhile held).
async function open(threadId, known = null) {
  try {
    if (state.root && state.root.id !== threadId) {
      await leave(state.root.id);
      if (state.viewing !== state.root.id) await leave(state.viewing);
    }
    const thread = known ?? list.find(threadId) ?? { id: threadId, label: null };
    state.root = { id: threadId, label: thread.label ?? null, readOnly: false };
    state.rootSeq = -1;
    state.running = false;
    names.clear();
    if (thread.label) names.set(threadId, thread.label);
    const start = performance.now();
    tree.reset(threadId, thread.label ?? null);
    const shown = begin(threadId);
    const followed = await follow(threadId);
    if (state.shown !== shown) return; // another thread was opened meanwhile
    state.readUpTo = followed.lastSeq ?? null;
    if (followed.lastSeq !== undefined) await state.rpc.request("thread/subscribe", { threadId, afterSeq: followed.lastSeq });
    await diagnose();
    await painted();
    performance.measure("tree", { start, end: performance.now() });
    await read(threadId, shown, start);
    await painted();
    performance.measure("transcript", { start, end: performance.now() });
  } catch (failure) {
    error(failure.message);
  }
}

// The next frame drawn (what the benchmark's timings measure up to).
function painted() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

async function leave(threadId) {
  try {
    await state.rpc.request("thread/unsubscribe", { threadId });
  } catch (failure) {
    error(failure.message);
  }
}

// Follow the root live (thread/resume: whether a turn runs); one another process holds is
// watched read-only. With afterSeq, what was stored after it is replayed first, then the
// subagent tree as it is now (read-only: always, from the start).
async function follow(threadId, afterSeq) {
  const params = afterSeq === undefined ? { threadId } : { threadId, afterSeq };
  try {
    const result = await state.rpc.request("thread/resume", params);
    list.live.add(threadId);
    state.root.readOnly = false;
    state.running = result.running === true;
    named(result.thread?.label);
    return result;
  } catch (failure) {
    if (failure.code !== "LOCKED") throw failure;
    await state.rpc.request("thread/subscribe", { threadId, afterSeq: afterSeq ?? -1 });
    state.root.readOnly = true;
    error(`${failure.message}: watching only`);
    return {};
  } finally {
    controls();
    list.mark(threadId);
  }
}

// Children that cannot be read, which only subagent/list names (the follow stated the rest).
async function diagnose() {
  if (state.root.readOnly) return;
  try {
    const result = await state.rpc.request("subagent/list", { threadId: state.root.id, scope: "descendants" });
    tree.diagnostics(result.rows);
  } catch (failure) {
    error(failure.message);
  }
}

// The root's label, which thread/resume knows when thread/list did not say it.
function named(label) {
  if (typeof label !== "string" || state.root.label === label) return;
  state.root.label = label;
  names.set(state.root.id, label);
  tree.rootLabel = label;
  tree.render();
  list.rename(state.root.id, label);
  if (state.viewing === state.root.id) $("viewing").textContent = `${label} · ${short(state.root.id)}`;
}

// Show a session's transcript from now on: its live notifications are held until read. Returns
// the view's number, which a read checks after each wait.
function begin(sessionId) {
  state.shown += 1;
  state.viewing = sessionId;
  state.loading = [];
  transcript.reset(sessionId);
  const label = sessionId === state.root.id ? state.root.label ?? "thread" : tree.label(sessionId) ?? "subagent";
  $("viewing").textContent = `${label} · ${short(sessionId)}`;
  return state.shown;
}

// The viewed session's stored transcript, page by page, then the live items held meanwhile
// (those already read are not shown twice). It stops when another view began meanwhile (its
// pages and held items are that view's own). With `start`, the first page's paint is timed.
async function read(sessionId, shown, start = null) {
  let afterSeq = -1;
  for (;;) {
    const page = await state.rpc.request("thread/read", { threadId: sessionId, afterSeq, limit: READ_PAGE });
    if (state.shown !== shown) return;
    transcript.add(page.items ?? []);
    if (start !== null && afterSeq === -1) {
      await painted();
      performance.measure("transcript-first", { start, end: performance.now() });
      if (state.shown !== shown) return;
    }
    const done = !page.items?.length || page.lastSeq === afterSeq;
    afterSeq = Math.max(afterSeq, page.lastSeq ?? -1);
    if (done) break;
  }
  transcript.reached(afterSeq); // a follow again goes on after what was read, items or not
  if (state.readUpTo === null) state.readUpTo = afterSeq;
  const held = state.loading ?? [];
  state.loading = null;
  for (const [method, params] of held) viewed(method, params);
  state.rootSeq = Math.max(state.rootSeq, sessionId === state.root.id ? transcript.lastSeq : -1);
}

// Follow a child's own transcript (read-only), or go back to the root's.
async function view(sessionId) {
  if (!state.root || sessionId === state.viewing) return;
  const previous = state.viewing;
  tree.choose(sessionId);
  try {
    if (previous !== state.root.id) await leave(previous);
    const shown = begin(sessionId);
    state.readUpTo = -1; // followed from now on: no turn replayed
    if (sessionId !== state.root.id) await state.rpc.request("thread/subscribe", { threadId: sessionId });
    if (state.shown === shown) await read(sessionId, shown);
  } catch (failure) {
    error(failure.message);
  }
  controls();
}

// -- notifications ---------------------------------------------------------------------------

// The root's turn and tree at once; the viewed transcript's items held while it is read.
function notify(method, params) {
  const root = state.root?.id;
  if (params.threadId === root && params.sessionId === root && typeof params.seq === "number") {
    state.rootSeq = Math.max(state.rootSeq, params.seq);
  }
  if (params.threadId === root) shown(onRoot, method, params);
  if (params.threadId !== state.viewing) return;
  if (state.loading) state.loading.push([method, params]);
  else viewed(method, params);
}

function viewed(method, params) {
  shown(onViewed, method, params);
}

function shown(handle, method, params) {
  try {
    handle(method, params);
  } catch (failure) {
    error(`a ${String(method)} notification could not be shown: ${failure.message}`);
  }
}

function onRoot(method, params) {
  switch (method) {
    case "turn/started":
      state.running = true;
      controls();
      break;
    case "turn/completed":
      state.running = false;
      controls();
      if (params.stopReason && params.stopReason !== "completed") error(`turn ended: ${params.stopReason}${params.error ? ": " + params.error : ""}`);
      break;
    case "subagent/started":
      if (params.label) names.set(params.subagentId, params.label);
      tree.started(params);
      break;
    case "subagent/status":
      tree.status(params);
      break;
    case "approval/decided":
      dialogs.decided(params.requestId);
      break;
  }
}

function onViewed(method, params) {
  switch (method) {
    case "item/started":
      transcript.started(params.item);
      break;
    case "item/agentMessage/delta":
      transcript.delta(params.itemId, params.delta);
      break;
    case "item/completed":
      transcript.completed(params.item, params.streamId);
      break;
    case "item/toolCall/progress":
      transcript.progress(params.itemId, params);
      break;
    case "turn/completed":
      if (params.sessionId !== state.viewing || params.seq <= state.readUpTo) break; // read already
      transcript.marker(`turn ${params.stopReason ?? "ended"}`, params.seq);
      break;
  }
}

// -- start -----------------------------------------------------------------------------------

$("new-thread").addEventListener("click", newThread);
$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const secret = $("login-token").value.trim();
  if (!secret) return;
  sessionStorage.setItem("agent-host.token", secret);
  $("login-token").value = "";
  state.rpc?.stop();
  connect(secret);
});

const secret = token();
if (secret) connect(secret);
else login("No token: open the console's URL that agent-host printed (it ends in #token=…), or paste the token.");
