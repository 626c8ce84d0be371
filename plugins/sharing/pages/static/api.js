// Where a page reads its data: the public API (a uuid; filter values as one `parameters=<json>`) or
// the embed API (a signed token; filter values as `slug=value`, repeated for a list). Nothing else.

// Pages live at <root>/<public|embed>/<question|dashboard>/<token>, so the API is two levels up
// (a Tessera served under a sub-path keeps working).
const ROOT = new URL("../../", window.location.href);

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// Metabase's error bodies: a JSON string, {message}, or {errors: {field: text}}.
function errorText(status, body) {
  if (typeof body === "string" && body) return body;
  if (body && typeof body.message === "string") return body.message;
  if (body && body.errors && typeof body.errors === "object") return Object.values(body.errors).join(" ");
  if (body && typeof body.error === "string") return body.error;
  return status === 404 ? "Not found." : `The server answered ${status}.`;
}

async function readBody(response) {
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) return response.json();
  return response.text();
}

export async function send(request) {
  const init = { method: request.method, credentials: "omit", headers: { Accept: "application/json" } };
  if (request.form) init.body = new URLSearchParams(request.form);
  const response = await fetch(request.url, init);
  if (!response.ok) throw new ApiError(response.status, errorText(response.status, await readBody(response)));
  return response;
}

export async function json(request) {
  const body = await readBody(await send(request));
  // A query that failed is a 202/400 with status "failed" and Metabase's generic error text.
  if (body && body.status === "failed") throw new ApiError(400, body.error || "An error occurred while running the query.");
  return body;
}

function url(path, search) {
  const target = new URL(path, ROOT);
  for (const [key, value] of search) target.searchParams.append(key, value);
  return target.href;
}

// A filter value as the API wants it: a list for most types, one value for single dates.
function values(value) {
  return Array.isArray(value) ? value : [value];
}

class PublicSource {
  constructor(uuid) {
    this.base = `api/public`;
    this.uuid = encodeURIComponent(uuid);
  }

  // Public parameters: [{id, type, value, target}], only those with a value.
  search(parameters, extra = []) {
    const chosen = parameters.filter((p) => p.value !== undefined && p.value !== null && p.value !== "")
      .map((p) => ({ id: p.id, type: p.type, value: p.value, ...(p.target ? { target: p.target } : {}) }));
    return [["parameters", JSON.stringify(chosen)], ...extra];
  }

  card() { return { method: "GET", url: url(`${this.base}/card/${this.uuid}`, []) }; }
  dashboard() { return { method: "GET", url: url(`${this.base}/dashboard/${this.uuid}`, []) }; }

  cardQuery(parameters, format = null, extra = []) {
    const path = `${this.base}/card/${this.uuid}/query${format ? `/${format}` : ""}`;
    return { method: "GET", url: url(path, this.search(parameters, extra)) };
  }

  dashcardQuery(dashcard, parameters, format = null, extra = []) {
    const path = `${this.base}/dashboard/${this.uuid}/dashcard/${dashcard.id}/card/${dashcard.card_id}`;
    if (!format) return { method: "GET", url: url(path, this.search(parameters)) };
    // Metabase downloads a public dashcard with a form POST holding `parameters`.
    const [[, encoded]] = this.search(parameters);
    return { method: "POST", url: url(`${path}/${format}`, extra), form: { parameters: encoded } };
  }

  paramValues(param, kind) {
    if (kind !== "dashboard") return null;
    return { method: "GET", url: url(`${this.base}/dashboard/${this.uuid}/params/${encodeURIComponent(param.id)}/values`, []) };
  }
}

class EmbedSource {
  constructor(token) {
    this.base = `api/embed`;
    this.token = encodeURIComponent(token);
  }

  search(parameters, extra = []) {
    const pairs = [];
    for (const p of parameters) {
      if (p.value === undefined || p.value === null || p.value === "") continue;
      for (const v of values(p.value)) pairs.push([p.slug, String(v)]);
    }
    return [...pairs, ...extra];
  }

  card() { return { method: "GET", url: url(`${this.base}/card/${this.token}`, []) }; }
  dashboard() { return { method: "GET", url: url(`${this.base}/dashboard/${this.token}`, []) }; }

  cardQuery(parameters, format = null, extra = []) {
    const path = `${this.base}/card/${this.token}/query${format ? `/${format}` : ""}`;
    return { method: "GET", url: url(path, this.search(parameters, extra)) };
  }

  dashcardQuery(dashcard, parameters, format = null, extra = []) {
    const path = `${this.base}/dashboard/${this.token}/dashcard/${dashcard.id}/card/${dashcard.card_id}`;
    return { method: "GET", url: url(`${path}${format ? `/${format}` : ""}`, this.search(parameters, extra)) };
  }

  paramValues(param, kind) {
    const what = kind === "dashboard" ? "dashboard" : "card";
    return { method: "GET", url: url(`${this.base}/${what}/${this.token}/params/${encodeURIComponent(param.id)}/values`, []) };
  }
}

export function source(kind, token) {
  return kind === "embed" ? new EmbedSource(token) : new PublicSource(token);
}
