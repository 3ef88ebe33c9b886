// The backend's web console: devices and their state, the selected device's panel, the
// last photos, live over the backend's event stream. Device data goes in as text only.

import { el } from "./form.js";
import { mountDevicePanel, settingsFromStatus } from "./panel.js";

const state = {
  token: null,
  devices: new Map(), // id -> device snapshot from the backend
  photos: [],
  selected: null,
  panel: null,
  listeners: new Map(), // device id -> Set of notification callbacks
  history: new Map(), // device id -> [[payload, {time}]]
  progress: new Map(), // progressToken -> onProgress
  calls: 0,
};
const $ = (id) => document.getElementById(id);

// ---- the token (needed only when the console is open to other machines) ----------------

function initToken() {
  const match = location.hash.match(/(?:^#|&)token=([^&]+)/);
  if (match) {
    sessionStorage.setItem("umcp-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  state.token = sessionStorage.getItem("umcp-token");
}

function askToken(message) {
  const dialog = $("login");
  $("login-message").textContent = message;
  dialog.hidden = false;
  $("token").focus();
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value.trim();
  sessionStorage.setItem("umcp-token", state.token);
  $("login").hidden = true;
  start();
});

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (options.body) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { ...options, headers, cache: "no-store" });
  if (response.status === 401) {
    askToken("This console is open to other machines: enter the token the backend printed.");
  }
  const type = response.headers.get("content-type") || "";
  const body = type.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError((body && body.error && body.error.message) || response.statusText, response.status);
  return body;
}

// ---- the panel's host: this backend, for one device ---------------------------------------

function deviceHost(id) {
  const base = `/api/devices/${encodeURIComponent(id)}`;
  return {
    async listTools({ withUserTools = false } = {}) {
      return (await api(`${base}/tools${withUserTools ? "?user=1" : ""}`)).tools;
    },
    async callTool(name, args, { onProgress } = {}) {
      const progressToken = `web-${Date.now().toString(36)}-${++state.calls}`;
      if (onProgress) state.progress.set(progressToken, onProgress);
      try {
        const answer = await api(`${base}/call`, { method: "POST", body: JSON.stringify({ name, arguments: args, progressToken }) });
        if (answer.error) {
          const error = new Error(answer.error.message);
          error.code = answer.error.code;
          throw error;
        }
        return answer.result;
      } finally {
        state.progress.delete(progressToken);
      }
    },
    onNotification(fn) {
      if (!state.listeners.has(id)) state.listeners.set(id, new Set());
      for (const [payload, meta] of state.history.get(id) || []) fn(payload, { ...meta, replay: true });
      state.listeners.get(id).add(fn);
      return () => state.listeners.get(id).delete(fn);
    },
  };
}

// ---- devices ------------------------------------------------------------------------------

function formatBytes(n) {
  if (n === null || n === undefined) return null;
  return n >= 1024 * 1024 ? `${(n / 1048576).toFixed(1)} MB` : `${Math.round(n / 1024)} KB`;
}

function formatUptime(device) {
  if (device.uptime_s === null || device.uptime_s === undefined || !device.online) return null;
  let s = device.uptime_s + Math.max(0, Math.floor(Date.now() / 1000 - (device.uptime_read_at || Date.now() / 1000)));
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return (d ? `${d}d ` : "") + (d || h ? `${h}h ` : "") + `${m}m ${s}s`;
}

function fact(name, value, key) {
  if (value === null || value === undefined || value === "") return null;
  return el("div", { class: "fact", dataset: { fact: key || name } }, el("dt", { text: name }), el("dd", { text: String(value) }));
}

function signalText(device) {
  if (device.signal !== null && device.signal !== undefined) return `${device.signal} dBm`;
  const net = device.network || {};
  if (net.type === "host") return "host network";
  if (net.type === "wifi") return net.connected ? "Wi-Fi" : "Wi-Fi down";
  return null;
}

// How a device reached this backend, in words: the xiaozhi WebSocket or MQTT, or as a tool
// provider at its MCP endpoint.
const TRANSPORTS = { mcp_endpoint: "MCP endpoint" };

function deviceCard(device) {
  const status = device.status || {};
  const speaker = status.audio_speaker || {};
  const screen = status.screen || {};
  const selected = device.id === state.selected;
  const card = el("button", {
    type: "button", class: `device ${device.online ? "online" : "offline"}${selected ? " selected" : ""}`,
    "aria-pressed": selected ? "true" : "false", dataset: { device: device.id },
    onclick: () => select(device.id),
  },
  el("div", { class: "device-head" },
    el("span", { class: "dot", "aria-hidden": "true" }),
    el("strong", { class: "device-id", text: device.id }),
    el("span", { class: "state", text: device.online ? (device.ready ? "online" : "connecting") : "offline" })),
  device.activation ? el("div", { class: "activation" }, "activation code ", el("strong", { text: String(device.activation.code ?? "") }),
    device.activation.message ? el("span", { text: ` ${device.activation.message}` }) : null) : null,
  device.error ? el("div", { class: "error", text: device.error }) : null,
  el("dl", { class: "facts" },
    fact("transport", TRANSPORTS[device.transport] || device.transport),
    fact("board", device.board),
    fact("firmware", device.firmware),
    fact("signal", signalText(device)),
    fact("free heap", formatBytes(device.free_heap), "free_heap"),
    fact("uptime", formatUptime(device)),
    fact("volume", speaker.volume, "volume"),
    fact("brightness", screen.brightness, "brightness"),
    fact("theme", screen.theme, "theme"),
    fact("tools", device.online ? device.tools : null)));
  return card;
}

function renderDevices() {
  const list = $("devices");
  const devices = [...state.devices.values()];
  $("device-count").textContent = `${devices.filter((d) => d.online).length} online, ${devices.length} seen`;
  list.replaceChildren(...devices.map(deviceCard));
  $("no-devices").hidden = devices.length > 0;
}

function updateDevice(device) {
  const before = state.devices.get(device.id);
  state.devices.set(device.id, device);
  const old = document.querySelector(`.device[data-device="${CSS.escape(device.id)}"]`);
  if (old) old.replaceWith(deviceCard(device)); else renderDevices();
  $("device-count").textContent = `${[...state.devices.values()].filter((d) => d.online).length} online, ${state.devices.size} seen`;
  $("no-devices").hidden = true;
  if (device.id === state.selected && before && (before.online !== device.online || before.ready !== device.ready)) showPanel();
  else if (device.id === state.selected && state.panel) state.panel.refreshValues();
  autoSelect();
}

function autoSelect() {
  const current = state.devices.get(state.selected);
  if (current && current.online) return;
  const next = [...state.devices.values()].find((d) => d.online && d.ready);
  if (next && next.id !== state.selected) select(next.id);
}

function select(id) {
  if (state.selected === id) return;
  state.selected = id;
  for (const card of document.querySelectorAll(".device")) {
    const on = card.dataset.device === id;
    card.classList.toggle("selected", on);
    card.setAttribute("aria-pressed", on ? "true" : "false");
  }
  showPanel();
}

function showPanel() {
  if (state.panel) state.panel.destroy();
  state.panel = null;
  const root = $("panel");
  const device = state.devices.get(state.selected);
  if (!device) { root.replaceChildren(); return; }
  if (!device.online || !device.ready) {
    delete root.dataset.ready;
    root.replaceChildren(el("p", { class: "muted", text: `${device.id} is ${device.online ? "connecting…" : "offline."}` }));
    return;
  }
  root.dataset.device = device.id;
  state.panel = mountDevicePanel(root, deviceHost(device.id), {
    title: `Tools of ${device.id}`,
    initialValues: (tool) => currentValues(state.devices.get(device.id), tool.name),
    // The first moment the page is usable: devices listed, a device's tools ready to call.
    onReady: () => { if (!performance.getEntriesByName("umcp-usable").length) performance.mark("umcp-usable"); },
  });
}

function currentValues(device, name) {
  return settingsFromStatus(device && device.status, name);
}

// ---- photos -------------------------------------------------------------------------------

async function photoThumb(photo) {
  const img = el("img", { class: "thumb", alt: `photo from ${photo.device}` });
  const figure = el("figure", { class: "photo", dataset: { photo: photo.id } }, img,
    el("figcaption", {}, el("span", { text: photo.device }), " ", el("time", { text: new Date(photo.time * 1000).toLocaleTimeString() }),
      el("div", { class: "muted", text: photo.question ? `${photo.source}: ${photo.question}` : photo.source })));
  // Fetched with the token, shown from a blob: (an <img src> could not send it).
  fetch(photo.url, { headers: state.token ? { Authorization: `Bearer ${state.token}` } : {} })
    .then((r) => (r.ok ? r.blob() : null))
    .then((blob) => { if (blob) { img.src = URL.createObjectURL(blob); img.addEventListener("click", () => window.open(img.src)); } });
  return figure;
}

async function addPhoto(photo) {
  state.photos.push(photo);
  const strip = $("photos");
  strip.prepend(await photoThumb(photo));
  while (strip.childElementCount > 12) strip.lastElementChild.remove();
  $("no-photos").hidden = true;
}

// ---- live events --------------------------------------------------------------------------

function onEvent(event) {
  if (event.type === "device") updateDevice(event.device);
  else if (event.type === "photo") addPhoto(event.photo);
  else if (event.type === "tools") notify(event.device, { method: "notifications/tools/list_changed" });
  else if (event.type === "notification") {
    const payload = event.payload || {};
    const params = payload.params || {};
    if (payload.method === "notifications/progress" && state.progress.has(params.progressToken)) {
      state.progress.get(params.progressToken)(params);
    }
    // The backend re-lists the tools first, then says so with a "tools" event.
    if (payload.method !== "notifications/tools/list_changed") notify(event.device, payload);
  }
}

// Each device's notifications since the page opened (the last 200): a panel mounted later
// (another device picked, or the device back from a reboot) starts with them.
const HISTORY = 200;

function notify(id, payload) {
  const meta = { time: Date.now() };
  if (!state.history.has(id)) state.history.set(id, []);
  const history = state.history.get(id);
  history.push([payload, meta]);
  if (history.length > HISTORY) history.shift();
  for (const fn of state.listeners.get(id) || []) fn(payload, meta);
}

async function follow() {
  let delay = 500;
  for (;;) {
    try {
      const headers = state.token ? { Authorization: `Bearer ${state.token}` } : {};
      // Subscribe and read the current state at once; an event that arrives before the
      // state is applied after it (both carry whole device snapshots).
      const loading = load().then(() => null, (error) => error);
      const response = await fetch("/api/events", { headers, cache: "no-store" });
      if (response.status === 401) { askToken("This console needs its token."); return; }
      if (!response.ok || !response.body) throw new Error(response.statusText);
      const failed = await loading;
      if (failed) throw failed;
      setLink(true);
      delay = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = chunk.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (error) {
      console.warn("event stream:", error);
    }
    setLink(false);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 10000);
  }
}

function setLink(up) {
  const link = $("link");
  link.textContent = up ? "live" : "reconnecting…";
  link.className = up ? "link up" : "link down";
}

async function load() {
  const data = await api("/api/devices");
  state.devices = new Map(data.devices.map((d) => [d.id, d]));
  renderDevices();
  const known = new Set(state.photos.map((p) => p.id));
  for (const photo of data.photos) if (!known.has(photo.id)) await addPhoto(photo);
  autoSelect();
}

function start() {
  follow();
}

setInterval(() => {
  for (const fact of document.querySelectorAll('.device.online .fact[data-fact="uptime"] dd')) {
    const device = state.devices.get(fact.closest(".device").dataset.device);
    if (device) fact.textContent = formatUptime(device);
  }
}, 1000);

initToken();
start();
