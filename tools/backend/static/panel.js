// One device's tools as forms, their results, and the device's notifications.
//
// The panel talks to its device only through `host`, so any page that can supply these
// three functions can show it (the backend's console does; so does the bridge's MCP App,
// tools/bridge/static/mcp-app.js):
//
//   host.listTools({withUserTools})          -> Promise<Tool[]> (MCP tools/list entries;
//                                               `userOnly: true` marks the owner's tools)
//   host.callTool(name, args, {onProgress})  -> Promise<CallToolResult>; a JSON-RPC error
//                                               rejects with an Error carrying .code
//   host.onNotification(fn)                  -> unsubscribe; fn(payload, meta) gets each MCP
//                                               notification of this device; meta is
//                                               optional: {time (ms), replay: true for one
//                                               that came before the panel did}
//
// mountDevicePanel(root, host, {title, onReady(tools), initialValues(tool) -> {arg: value}})
//   -> {reload(), refreshValues(), destroy()}
// settingsFromStatus(status, toolName) -> {arg: value} | undefined: where a setting tool's
//   form starts, from self.get_device_status's answer (both hosts use it for initialValues)

import { buildForm, el, validate } from "./form.js";

const MAX_FEED = 200;

// The setting a tool changes, as the device's status reports it: its form starts there (a
// slider at the current volume, not at 0).
const STATUS_OF = {
  "self.audio_speaker.set_volume": (s) => ({ volume: s.audio_speaker?.volume }),
  "self.screen.set_brightness": (s) => ({ brightness: s.screen?.brightness }),
  "self.screen.set_theme": (s) => ({ theme: s.screen?.theme }),
};

export function settingsFromStatus(status, name) {
  return status && STATUS_OF[name] ? STATUS_OF[name](status) : undefined;
}
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

export function mountDevicePanel(root, host, options = {}) {
  const state = { withUser: false, tools: [], forms: [], destroyed: false, loading: null };
  delete root.dataset.ready; // set again once this device's tools are shown
  const userSwitch = el("input", { type: "checkbox", role: "switch", class: "switch", id: `user-only-${Math.random().toString(36).slice(2)}` });
  const toolList = el("div", { class: "tools", "aria-live": "polite" });
  const feed = el("ol", { class: "feed", "aria-label": "device notifications" });
  const status = el("p", { class: "panel-status", role: "status" });
  root.replaceChildren(
    el("div", { class: "panel-head" },
      el("h2", { text: options.title || "Tools" }),
      el("label", { class: "switch-label", for: userSwitch.id }, userSwitch, " show user-only tools (the owner's: reboot, upgrade, photo…)")),
    status,
    toolList,
    rawCall(),
    el("section", { class: "feed-box" }, el("h3", { text: "Notifications" }), feed),
  );
  userSwitch.addEventListener("change", () => { state.withUser = userSwitch.checked; reload(); });

  async function reload() {
    const token = {};
    state.loading = token;
    status.textContent = "loading tools…";
    try {
      const tools = await host.listTools({ withUserTools: state.withUser });
      if (state.loading !== token || state.destroyed) return;
      state.tools = tools;
      renderTools(tools);
      status.textContent = `${tools.length} tools${state.withUser ? " (user-only included)" : ""}`;
      root.dataset.ready = "true";
      if (options.onReady) options.onReady(tools);
    } catch (error) {
      if (state.loading !== token) return;
      status.textContent = `listing tools failed: ${error.message}`;
      status.classList.add("error");
    }
  }

  function renderTools(tools) {
    const open = new Set([...toolList.querySelectorAll("details[open]")].map((d) => d.dataset.tool));
    state.forms = [];
    toolList.replaceChildren(...tools.map((tool) => toolCard(tool, open.has(tool.name) || tools.length <= 12)));
  }

  function toolCard(tool, isOpen) {
    const schema = tool.inputSchema || { type: "object" };
    const form = buildForm(schema);
    const entry = { tool, form, touched: false };
    state.forms.push(entry);
    if (options.initialValues) form.set(options.initialValues(tool));
    form.element.addEventListener("input", () => { entry.touched = true; });
    const result = el("div", { class: "result", "aria-live": "polite" });
    const progress = el("progress", { class: "progress", max: 1, value: 0, hidden: true });
    const progressText = el("span", { class: "progress-text", hidden: true });
    const button = el("button", { type: "submit", text: "Call" });
    const annotations = tool.annotations || {};
    const badges = [];
    if (tool.userOnly) badges.push(el("span", { class: "badge user", text: "user-only" }));
    if (annotations.readOnlyHint) badges.push(el("span", { class: "badge", text: "read-only" }));
    if (annotations.destructiveHint) badges.push(el("span", { class: "badge danger", text: "destructive" }));
    const formEl = el("form", { class: "tool-form", novalidate: true }, form.element,
      el("div", { class: "actions" }, button, progress, progressText), result);
    const card = el("details", { class: "tool", dataset: { tool: tool.name } },
      el("summary", {}, el("code", { class: "tool-name", text: tool.name }),
        tool.title ? el("span", { class: "tool-title", text: tool.title }) : null, ...badges),
      tool.description ? el("p", { class: "description", text: tool.description }) : null,
      formEl);
    card.open = isOpen;

    async function call() {
      const { value, errors } = form.read();
      form.showErrors(errors);
      if (errors.length) {
        showResult(result, { error: errors.map((e) => `${e.field} ${e.message}`.trim()).join("; "), local: true });
        return;
      }
      button.disabled = true;
      result.dataset.state = "calling";
      const started = performance.now();
      progress.hidden = progressText.hidden = true;
      try {
        const answer = await host.callTool(tool.name, value, {
          onProgress(params) {
            // Without a total (the device may not know the size) the bar is indeterminate.
            progress.hidden = progressText.hidden = false;
            if (params.total) { progress.max = params.total; progress.value = params.progress; } else progress.removeAttribute("value");
            progressText.textContent = params.message || `${params.progress}${params.total ? ` / ${params.total}` : ""}`;
          },
        });
        showResult(result, { result: answer, ms: performance.now() - started });
      } catch (error) {
        showResult(result, { error: error.message, code: error.code, ms: performance.now() - started });
      } finally {
        button.disabled = false;
        progress.hidden = progressText.hidden = true;
      }
    }
    onSubmit(formEl, button, call);

    // A tool with one bounded integer that says it is idempotent and harmless (volume,
    // brightness) is called as its slider is let go: the slider is the control.
    const props = Object.keys(schema.properties || {});
    const only = form.fields.length === 1 ? form.fields[0] : null;
    if (only && only.slider && props.length === 1 && annotations.idempotentHint && !annotations.destructiveHint) {
      only.slider.addEventListener("change", () => call());
      card.classList.add("live");
    }
    return card;
  }

  // Any tool by name with arguments as JSON, as the stdin console's `call` does (a listed
  // tool's arguments are still checked against its schema first).
  function rawCall() {
    const name = el("input", { type: "text", name: "raw-name", "aria-label": "tool name", placeholder: "tool name", required: true });
    const args = el("textarea", { name: "raw-arguments", rows: 2, class: "json", "aria-label": "arguments as JSON", placeholder: "{}" });
    const result = el("div", { class: "result", "aria-live": "polite" });
    const button = el("button", { type: "submit", text: "Call" });
    const form = el("form", { class: "tool-form raw", novalidate: true },
      el("div", { class: "control" }, name), el("div", { class: "control" }, args),
      el("div", { class: "actions" }, button), result);
    onSubmit(form, button, async () => {
      let value;
      try {
        value = args.value.trim() ? JSON.parse(args.value) : {};
      } catch (error) {
        showResult(result, { error: `arguments are not JSON: ${error.message}`, local: true });
        return;
      }
      const known = state.tools.find((t) => t.name === name.value.trim());
      const errors = known ? validate(known.inputSchema || {}, value)
        : value === null || typeof value !== "object" || Array.isArray(value) ? [{ field: "", message: "arguments must be a JSON object" }] : [];
      if (errors.length) {
        showResult(result, { error: errors.map((e) => `${e.field} ${e.message}`.trim()).join("; "), local: true });
        return;
      }
      const started = performance.now();
      try {
        showResult(result, { result: await host.callTool(name.value.trim(), value), ms: performance.now() - started });
      } catch (error) {
        showResult(result, { error: error.message, code: error.code, ms: performance.now() - started });
      }
    });
    return el("details", { class: "tool raw-call" }, el("summary", { text: "Call a tool by name, arguments as JSON" }), form);
  }

  function addFeed(payload, meta = {}) {
    const method = payload.method || "";
    const params = payload.params || {};
    let kind = method.replace(/^notifications\//, "");
    let text;
    if (method === "notifications/message") {
      kind = `log ${params.level || ""}`.trim();
      text = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
      if (params.logger) text = `${params.logger}: ${text}`;
    } else if (method === "notifications/progress") {
      const amount = `${params.progress}${params.total ? ` / ${params.total}` : ""}`;
      text = params.message ? (params.total ? `${params.message} (${amount})` : params.message) : amount;
    } else if (method === "notifications/tools/list_changed") {
      text = "the device's tool list changed";
    } else {
      text = JSON.stringify(params);
    }
    const item = el("li", { class: `note ${method === "notifications/message" ? `level-${params.level}` : ""}`, dataset: { method } },
      el("time", { text: new Date(meta.time || Date.now()).toLocaleTimeString() }), el("span", { class: "kind", text: kind }), el("span", { class: "text", text }));
    feed.prepend(item);
    while (feed.childElementCount > MAX_FEED) feed.lastElementChild.remove();
  }

  const unsubscribe = host.onNotification((payload, meta = {}) => {
    if (state.destroyed) return;
    addFeed(payload, meta);
    if (payload.method === "notifications/tools/list_changed" && !meta.replay) reload();
  });
  reload();

  return {
    reload,
    // The device's settings changed (or became known): forms nobody has touched follow.
    refreshValues() {
      if (!options.initialValues) return;
      for (const entry of state.forms) if (!entry.touched) entry.form.set(options.initialValues(entry.tool));
    },
    destroy() {
      state.destroyed = true;
      unsubscribe();
      delete root.dataset.ready;
      root.replaceChildren();
    },
  };
}

// A form's Call, by its button or by Enter (which clicks the default button), handled on
// the click: a sandboxed iframe without allow-forms (an MCP Apps host may not grant it)
// blocks a form submission before any submit event, but the click still arrives.
function onSubmit(form, button, fn) {
  button.addEventListener("click", (event) => { event.preventDefault(); fn(); });
  form.addEventListener("submit", (event) => { event.preventDefault(); fn(); });
}

// A result as the device returned it: text as text, JSON pretty-printed, images as
// images, audio as a player; a tool error or a JSON-RPC error in red with its message.
export function showResult(box, outcome) {
  box.replaceChildren();
  delete box.dataset.state;
  const timing = outcome.ms !== undefined ? el("span", { class: "ms", text: `${Math.round(outcome.ms)} ms` }) : null;
  if (outcome.error !== undefined) {
    box.dataset.state = "error";
    const label = outcome.local ? "not sent: " : outcome.code !== undefined ? `error ${outcome.code}: ` : "error: ";
    box.append(el("div", { class: "error", role: "alert" }, el("strong", { text: label }), el("span", { class: "message", text: outcome.error })));
    if (timing) box.append(timing);
    return;
  }
  const result = outcome.result || {};
  box.dataset.state = result.isError ? "error" : "ok";
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts = blocks.map((block) => renderBlock(block, result.isError));
  if (result.structuredContent !== undefined) parts.push(el("pre", { class: "json", text: JSON.stringify(result.structuredContent, null, 2) }));
  if (!parts.length) parts.push(el("pre", { class: "json", text: JSON.stringify(result, null, 2) }));
  box.append(...(result.isError ? [el("div", { class: "error", role: "alert" }, el("strong", { text: "tool error: " }), ...parts)] : parts));
  if (timing) box.append(timing);
}

function renderBlock(block, isError) {
  if (!block || typeof block !== "object") return el("pre", { text: JSON.stringify(block) });
  if (block.type === "text") {
    const text = String(block.text ?? "");
    try {
      const value = JSON.parse(text);
      if (value !== null && typeof value === "object") return el("pre", { class: "json", text: JSON.stringify(value, null, 2) });
    } catch (e) { /* plain text */ }
    return el(isError ? "span" : "pre", { class: "text message", text });
  }
  if (block.type === "image" && IMAGE_TYPES.has(block.mimeType) && typeof block.data === "string") {
    const bytes = Math.floor(block.data.length * 3 / 4);
    return el("figure", {}, el("img", { class: "result-image", alt: `${block.mimeType} from the device`, src: `data:${block.mimeType};base64,${block.data}` }),
      el("figcaption", { text: `${block.mimeType}, about ${bytes} bytes` }));
  }
  if (block.type === "audio" && typeof block.data === "string" && /^audio\/[\w.+-]+$/.test(block.mimeType || "")) {
    return el("audio", { controls: true, src: `data:${block.mimeType};base64,${block.data}` });
  }
  return el("pre", { class: "json", text: JSON.stringify(block, null, 2) });
}

export { validate };
