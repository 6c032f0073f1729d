// The message box and its buttons: to the root a followup when it is idle (turn/start), a
// steer while its turn runs (turn/steer); to a followed child subagent/send. Interrupt stops
// the shown session's turn.

const $ = (id) => document.getElementById(id);

export class Composer {
  constructor(state, error) {
    this.state = state; // the page's: rpc, root, viewing, running, starting
    this.error = error; // shows one line under the transcript
    $("composer").addEventListener("submit", (event) => this.send(event));
    $("message").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) this.send(event);
    });
    $("interrupt").addEventListener("click", () => this.interrupt());
  }

  // The box and buttons usable or not, and what Send does now.
  controls() {
    const { root, viewing, running, starting } = this.state;
    const child = root && viewing !== root.id;
    const usable = Boolean(root) && !starting && !(root.readOnly && !child);
    $("message").disabled = !usable;
    $("send").disabled = !usable;
    $("interrupt").disabled = !usable;
    $("send").textContent = child ? "Send to subagent" : running ? "Steer" : "Send";
  }

  async send(event) {
    event.preventDefault();
    const { rpc, root, viewing, running } = this.state;
    const text = $("message").value;
    if (!text.trim() || !root) return;
    try {
      if (viewing !== root.id) {
        await rpc.request("subagent/send", { threadId: root.id, subagentId: viewing, text });
      } else {
        const method = running ? "turn/steer" : "turn/start";
        await rpc.request(method, { threadId: root.id, input: [{ type: "text", text }] });
      }
      $("message").value = "";
    } catch (failure) {
      this.error(failure.message);
    }
  }

  async interrupt() {
    const { rpc, root, viewing } = this.state;
    if (!root) return;
    try {
      if (viewing !== root.id) await rpc.request("subagent/interrupt", { threadId: root.id, subagentId: viewing });
      else await rpc.request("turn/interrupt", { threadId: root.id });
    } catch (failure) {
      this.error(failure.message);
    }
  }
}
