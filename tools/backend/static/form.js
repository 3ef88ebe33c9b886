// A tool's inputSchema (the JSON Schema subset MCP tools use) as a form, and the checks
// the device makes on the arguments, made here first. Everything a device wrote (names,
// descriptions) goes in as text: this module never sets innerHTML.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function typeOf(schema) {
  const t = schema && schema.type;
  return Array.isArray(t) ? t.find((x) => x !== "null") : t;
}

// The errors the arguments `value` have against `schema`: [{field, message}], [] when good.
export function validate(schema, value) {
  const errors = [];
  const props = (schema && schema.properties) || {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [{ field: "", message: "arguments must be an object" }];
  }
  for (const name of schema.required || []) {
    if (!(name in value)) errors.push({ field: name, message: "is required" });
  }
  for (const [name, v] of Object.entries(value)) {
    const prop = props[name];
    if (!prop) {
      if (schema.additionalProperties === false) errors.push({ field: name, message: "is not an argument of this tool" });
      continue;
    }
    errors.push(...checkValue(prop, v).map((message) => ({ field: name, message })));
  }
  return errors;
}

function checkValue(prop, v) {
  const type = typeOf(prop);
  const errors = [];
  if (type === "integer" && !Number.isInteger(v)) return ["must be an integer"];
  if (type === "number" && (typeof v !== "number" || !Number.isFinite(v))) return ["must be a number"];
  if (type === "boolean" && typeof v !== "boolean") return ["must be true or false"];
  if (type === "string" && typeof v !== "string") return ["must be a string"];
  if (type === "array" && !Array.isArray(v)) return ["must be an array"];
  if (type === "object" && (v === null || typeof v !== "object" || Array.isArray(v))) return ["must be an object"];
  if (typeof v === "number") {
    if (prop.minimum !== undefined && v < prop.minimum) errors.push(`must be at least ${prop.minimum}`);
    if (prop.maximum !== undefined && v > prop.maximum) errors.push(`must be at most ${prop.maximum}`);
  }
  if (typeof v === "string") {
    if (prop.minLength !== undefined && v.length < prop.minLength) errors.push(`must have at least ${prop.minLength} characters`);
    if (prop.maxLength !== undefined && v.length > prop.maxLength) errors.push(`must have at most ${prop.maxLength} characters`);
  }
  if (Array.isArray(prop.enum) && !prop.enum.some((x) => x === v)) {
    errors.push(`must be one of ${prop.enum.map((x) => JSON.stringify(x)).join(", ")}`);
  }
  return errors;
}

let formCount = 0;

// buildForm(schema) -> {element, read(): {value, errors}, onLive(fn)}
// A field's read() gives undefined when left empty (an optional argument is then left out).
export function buildForm(schema, options = {}) {
  const prefix = `f${++formCount}`;
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = [];
  const element = el("div", { class: "fields" });
  for (const [name, prop] of Object.entries(props)) {
    const field = buildField(`${prefix}-${fields.length}`, name, prop || {}, required.has(name));
    fields.push(field);
    element.append(field.element);
  }
  return {
    element,
    fields,
    read() {
      const value = {};
      const errors = [];
      for (const field of fields) {
        const got = field.read();
        if (got.error) errors.push({ field: field.name, message: got.error });
        else if (got.value !== undefined) value[field.name] = got.value;
      }
      if (errors.length) return { value, errors };
      return { value, errors: validate(schema, value) };
    },
    // Put values in (e.g. the device's current volume), leaving the others as they are.
    set(values) {
      for (const field of fields) if (values && values[field.name] !== undefined) field.set(values[field.name]);
    },
    showErrors(errors) {
      for (const field of fields) field.showError(errors.filter((e) => e.field === field.name).map((e) => e.message).join("; "));
    },
  };
}

function buildField(id, name, prop, isRequired) {
  const type = typeOf(prop);
  const label = el("label", { for: id, class: "field-name" }, el("code", { text: name }));
  if (isRequired) label.append(el("span", { class: "required", title: "required", text: " *" }));
  if (prop.title) label.append(el("span", { class: "field-title", text: ` ${prop.title}` }));
  const help = prop.description ? el("div", { class: "help", id: `${id}-help`, text: prop.description }) : null;
  const error = el("div", { class: "field-error", role: "alert", id: `${id}-error` });
  const describedBy = [help && `${id}-help`, `${id}-error`].filter(Boolean).join(" ");
  let control, read, extra = null;

  if (Array.isArray(prop.enum)) {
    control = el("select", { id, name, "aria-describedby": describedBy });
    if (!isRequired || prop.default === undefined) control.append(el("option", { value: "", text: isRequired ? "choose…" : "(not set)" }));
    prop.enum.forEach((option, i) => control.append(el("option", { value: String(i), text: String(option) })));
    if (prop.default !== undefined) {
      const i = prop.enum.indexOf(prop.default);
      if (i >= 0) control.value = String(i);
    }
    read = () => (control.value === "" ? { value: undefined } : { value: prop.enum[Number(control.value)] });
  } else if (type === "boolean") {
    control = el("input", { id, name, type: "checkbox", role: "switch", class: "switch", "aria-describedby": describedBy });
    control.checked = prop.default === true;
    // A switch always has a value: required or not, it is sent.
    read = () => ({ value: control.checked });
  } else if (type === "integer" || type === "number") {
    const step = type === "integer" ? "1" : "any";
    control = el("input", { id, name, type: "number", step, inputmode: type === "integer" ? "numeric" : "decimal",
      min: prop.minimum, max: prop.maximum, "aria-describedby": describedBy });
    if (prop.default !== undefined) control.value = String(prop.default);
    if (prop.minimum !== undefined && prop.maximum !== undefined) {
      const slider = el("input", { type: "range", min: prop.minimum, max: prop.maximum, step,
        "aria-label": `${name} slider`, class: "slider", dataset: { field: name } });
      slider.value = String(prop.default ?? prop.minimum);
      if (prop.default === undefined) control.value = "";
      slider.addEventListener("input", () => { control.value = slider.value; });
      control.addEventListener("input", () => { if (control.value !== "") slider.value = control.value; });
      extra = slider;
    }
    read = () => {
      const text = control.value.trim();
      if (text === "") {
        // type=number gives "" for text it cannot parse: say so rather than leave it out.
        if (control.validity && control.validity.badInput) return { error: "is not a number" };
        return { value: undefined };
      }
      const n = Number(text);
      if (!Number.isFinite(n)) return { error: "is not a number" };
      return { value: n };
    };
  } else if (type === "string" || type === undefined) {
    const long = (prop.maxLength || 0) > 200;
    control = el(long ? "textarea" : "input", { id, name, type: long ? undefined : "text", "aria-describedby": describedBy });
    if (prop.default !== undefined) control.value = String(prop.default);
    read = () => (control.value === "" ? { value: undefined } : { value: control.value });
  } else {
    control = el("textarea", { id, name, rows: 3, placeholder: type === "array" ? "[ ]" : "{ }", class: "json", "aria-describedby": describedBy });
    if (prop.default !== undefined) control.value = JSON.stringify(prop.default);
    read = () => {
      if (control.value.trim() === "") return { value: undefined };
      try { return { value: JSON.parse(control.value) }; } catch (e) { return { error: `is not JSON: ${e.message}` }; }
    };
  }
  const row = el("div", { class: "field", dataset: { field: name } }, label,
    el("div", { class: "control" }, extra, control), help, error);
  return {
    name, element: row, control, slider: extra, prop,
    read,
    set(v) {
      if (control.type === "checkbox") control.checked = v === true;
      else if (control.tagName === "SELECT") control.value = String(prop.enum.indexOf(v));
      else control.value = typeof v === "string" ? v : JSON.stringify(v);
      if (extra) extra.value = String(v);
    },
    showError(message) {
      error.textContent = message ? `${name} ${message}` : "";
      control.toggleAttribute("aria-invalid", Boolean(message));
    },
  };
}
