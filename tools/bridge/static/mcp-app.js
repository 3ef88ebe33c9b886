// The device panel (tools/backend/static/panel.js, unchanged) as an MCP App view.
//
// The bridge serves this module, panel.js, form.js, style.css and ext-apps' App class
// inlined into one HTML document (tools/bridge/app.py): an Apps-capable client loads it
// in a sandboxed iframe when `bridge__show_panel` is called, and every request goes
// through the client (postMessage JSON-RPC, the MCP Apps extension), never to us directly.
//
// The panel's host contract on top of the App API:
//   listTools    -> tools/call bridge__device_tools {device, withUserTools}
//   callTool     -> tools/call of the bridge's name for the device's tool (the listing's
//                   bridgeName; a name it does not list goes as ALIAS__name, for the
//                   bridge to answer that there is no such tool)
//   onNotification: a view only hears what its host sends it (tool input and result, host
//                   context), not the server's notifications: the feed stays empty here.

import { App } from "./ext-apps-app.js";
import { mountDevicePanel, settingsFromStatus } from "./panel.js";

export const DEVICE_TOOLS = "bridge__device_tools";
const STATUS_TOOL = "self.get_device_status";

function failure(result) {
  const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join(" ");
  return new Error(text || "tool error");
}

export function bridgeHost(app, alias) {
  const bridgeNames = new Map(); // the device's tool name -> the bridge's
  return {
    async listTools({ withUserTools } = {}) {
      const result = await app.callServerTool({ name: DEVICE_TOOLS, arguments: { device: alias, withUserTools: !!withUserTools } });
      if (result.isError) throw failure(result);
      for (const tool of result.structuredContent.tools) bridgeNames.set(tool.name, tool.bridgeName);
      return result.structuredContent.tools;
    },
    callTool(name, args) {
      return app.callServerTool({ name: bridgeNames.get(name) || `${alias}__${name}`, arguments: args || {} });
    },
    onNotification() {
      return () => {};
    },
  };
}

export function startView(root, statusLine) {
  const app = new App({ name: "umcp device panel", version: "1.0.0" }, {}, { autoResize: true });
  let shown = null;
  let panel = null;
  function show(alias) {
    if (!alias || alias === shown) return;
    shown = alias;
    if (panel) panel.destroy();
    statusLine.textContent = "";
    root.dataset.device = alias;
    let settings = null; // the device's status, once read
    const host = bridgeHost(app, alias);
    panel = mountDevicePanel(root, host, {
      title: `${alias}: tools`,
      initialValues: (tool) => settingsFromStatus(settings, tool.name),
      // Where the settings are now (the console has them from its backend), read at
      // each (re)listing: sliders start at the device's volume and brightness, not at 0.
      onReady: (tools) => {
        if (!tools.some((t) => t.name === STATUS_TOOL)) return;
        host.callTool(STATUS_TOOL, {}).then((result) => {
          const text = (result.content || []).find((b) => b.type === "text");
          settings = text ? JSON.parse(text.text) : null;
          if (shown === alias && panel) panel.refreshValues();
        }).catch(() => {});
      },
    });
  }
  // The device asked for (tool input) right away; else the one the bridge chose (result).
  app.ontoolinput = (params) => show(params && params.arguments && params.arguments.device);
  app.ontoolresult = (result) => {
    if (result && result.isError) statusLine.textContent = failure(result).message;
    else show(result && result.structuredContent && result.structuredContent.device);
  };
  app.connect().then(() => { if (!shown) statusLine.textContent = "waiting for the device…"; },
    (error) => { statusLine.textContent = `the host did not connect: ${error.message}`; });
  return app;
}

const root = typeof document !== "undefined" && document.getElementById("panel");
if (root) startView(root, document.getElementById("app-status"));
