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
  const response = await fetch(request.url, { credentials: "omit", headers: { Accept: "application/json" } });
  if (!response.ok) throw new ApiError(response.status, errorText(response.status, await readBody(response)));
  return response;
}

// The JSON body of an answer `send` gave.
export async function result(response) {
  const body = await readBody(response);
  // A query that failed is a 202/400 with status "failed" and Metabase's generic error text.
  if (body && body.status === "failed") throw new ApiError(400, body.error || "An error occurred while running the query.");
  return body;
}

export async function json(request) {
  return result(await send(request));
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

// A filter's values (`/values`) or those matching the text typed (`/search/<text>`), narrowed by the
// other filters' values: `<parameter id>=<value>`, repeated for a list (chained filters), on both APIs.
function valuesRequest(base, param, others, text) {
  const chosen = others.filter((p) => p.id !== param.id && p.value !== undefined && p.value !== null && p.value !== "");
  const search = chosen.flatMap((p) => values(p.value).map((v) => [p.id, String(v)]));
  const tail = text ? `search/${encodeURIComponent(text)}` : "values";
  return { url: url(`${base}/params/${encodeURIComponent(param.id)}/${tail}`, search) };
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

  card() { return { url: url(`${this.base}/card/${this.uuid}`, []) }; }
  dashboard() { return { url: url(`${this.base}/dashboard/${this.uuid}`, []) }; }

  cardQuery(parameters, format = null, extra = []) {
    const path = `${this.base}/card/${this.uuid}/query${format ? `/${format}` : ""}`;
    return { url: url(path, this.search(parameters, extra)) };
  }

  dashcardQuery(dashcard, parameters, format = null, extra = []) {
    const path = `${this.base}/dashboard/${this.uuid}/dashcard/${dashcard.id}/card/${dashcard.card_id}`;
    return { url: url(`${path}${format ? `/${format}` : ""}`, this.search(parameters, extra)) };
  }

  paramValues(param, kind, others = [], text = "") {
    return valuesRequest(`${this.base}/${kind === "dashboard" ? "dashboard" : "card"}/${this.uuid}`, param, others, text);
  }
}

class EmbedSource {
  constructor(token) {
    this.base = `api/embed`;
    this.token = encodeURIComponent(token);
  }

  // Embed parameters: `slug=value`, repeated for a list. A chart's request also carries its size and
  // theme in the query string, so its values go as one `parameters=<json object>` instead (Metabase 51+),
  // which the server reads in place of the plain keys: `width` can never be taken for a filter's slug.
  search(parameters, extra = []) {
    const given = parameters.filter((p) => p.value !== undefined && p.value !== null && p.value !== "");
    if (extra.length) return [["parameters", JSON.stringify(Object.fromEntries(given.map((p) => [p.slug, p.value])))], ...extra];
    return given.flatMap((p) => values(p.value).map((v) => [p.slug, String(v)]));
  }

  card() { return { url: url(`${this.base}/card/${this.token}`, []) }; }
  dashboard() { return { url: url(`${this.base}/dashboard/${this.token}`, []) }; }

  cardQuery(parameters, format = null, extra = []) {
    const path = `${this.base}/card/${this.token}/query${format ? `/${format}` : ""}`;
    return { url: url(path, this.search(parameters, extra)) };
  }

  dashcardQuery(dashcard, parameters, format = null, extra = []) {
    const path = `${this.base}/dashboard/${this.token}/dashcard/${dashcard.id}/card/${dashcard.card_id}`;
    return { url: url(`${path}${format ? `/${format}` : ""}`, this.search(parameters, extra)) };
  }

  paramValues(param, kind, others = [], text = "") {
    return valuesRequest(`${this.base}/${kind === "dashboard" ? "dashboard" : "card"}/${this.token}`, param, others, text);
  }
}

export function source(kind, token) {
  return kind === "embed" ? new EmbedSource(token) : new PublicSource(token);
}
