// node --import tests/support/bearerpreload.mjs ...: every HTTP request the process makes
// (fetch and undici, through the global dispatcher; node:http's request) carries
// `Authorization: Bearer $UMCP_BEARER`. The MCP conformance suite has no option for a
// header, and the board's endpoint wants its token: with this its requests still go
// straight to the board, nothing in between.
import http from "node:http";
import { Agent, setGlobalDispatcher } from "undici";

const value = "Bearer " + process.env.UMCP_BEARER;

function isAuthorization(name) {
  return String(name).toLowerCase() === "authorization";
}

function withToken(headers) {
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) {  // [[name, value], ...]
      return [...headers.filter(([name]) => !isAuthorization(name)), ["authorization", value]];
    }
    const flat = [];  // [name, value, name, value, ...]
    for (let i = 0; i < headers.length; i += 2) {
      if (!isAuthorization(headers[i])) flat.push(headers[i], headers[i + 1]);
    }
    return [...flat, "authorization", value];
  }
  if (typeof headers[Symbol.iterator] === "function" && headers.constructor !== Object) {
    return withToken([...headers]);  // a Headers object or a Map
  }
  const out = {};
  for (const [name, v] of Object.entries(headers)) if (!isAuthorization(name)) out[name] = v;
  out.authorization = value;
  return out;
}

class BearerAgent extends Agent {
  dispatch(options, handler) {
    return super.dispatch({ ...options, headers: withToken(options.headers) }, handler);
  }
}

setGlobalDispatcher(new BearerAgent());

const request = http.request;
http.request = function (...args) {
  const at = typeof args[0] === "string" || args[0] instanceof URL ? 1 : 0;
  if (at === 1 && (typeof args[1] !== "object" || args[1] === null)) args.splice(1, 0, {});
  args[at] = { ...args[at], headers: withToken(args[at].headers) };
  return request.apply(this, args);
};
