// agentrag web page. Every piece of document text goes into the page with textContent, never innerHTML:
// nothing inside a document can run here.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: localStorage.getItem("agentrag-key") || "", kb: localStorage.getItem("agentrag-kb") || "" };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function status(text) { $("status").textContent = text; }

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: `Bearer ${state.key}` }, options.headers || {});
  const response = await fetch(path, Object.assign({}, options, { headers }));
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail || detail; } catch (e) { /* not JSON */ }
    throw new Error(`${response.status}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
  return response.status === 204 ? null : response.json();
}

async function loadKbs() {
  if (!state.key) { status("Enter an API key (agentrag keys create)"); return; }
  try {
    const data = await api("/v1/kb");
    const select = $("kb");
    select.replaceChildren();
    for (const kb of data.knowledge_bases) {
      const option = el("option", `${kb.name} (${kb.documents})`);
      option.value = kb.name;
      select.appendChild(option);
    }
    if (!data.knowledge_bases.some((kb) => kb.name === state.kb)) state.kb = data.knowledge_bases[0]?.name || "";
    select.value = state.kb;
    status(data.knowledge_bases.length ? "" : "No knowledge base yet: create one with New…");
    await loadDocuments();
  } catch (error) { status(error.message); }
}

async function loadDocuments() {
  const list = $("documents");
  list.replaceChildren();
  if (!state.kb) return;
  const data = await api(`/v1/kb/${encodeURIComponent(state.kb)}/documents`);
  for (const doc of data.documents) {
    const item = el("li");
    item.appendChild(el("span", `${doc.title} · ${doc.n_chunks} chunks`));
    const remove = el("button", "delete");
    remove.title = `Delete ${doc.source}`;
    remove.addEventListener("click", async () => {
      if (!confirm(`Delete ${doc.title}?`)) return;
      await api(`/v1/kb/${encodeURIComponent(state.kb)}/documents/${encodeURIComponent(doc.doc_id)}`, { method: "DELETE" });
      await loadKbs();
    });
    item.appendChild(remove);
    list.appendChild(item);
  }
}

async function upload(event) {
  event.preventDefault();
  const files = $("file").files;
  for (const file of files) {
    const form = new FormData();
    form.append("file", file);
    status(`uploading ${file.name}…`);
    try {
      const result = await api(`/v1/kb/${encodeURIComponent(state.kb)}/documents`, { method: "POST", body: form });
      status(`${file.name}: ${result.status}, ${result.chunks} chunks`);
    } catch (error) { status(`${file.name}: ${error.message}`); }
  }
  $("file").value = "";
  await loadKbs();
}

// Server-sent events over fetch (EventSource cannot POST or send a key).
async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield { name, data: data ? JSON.parse(data) : null };
    }
  }
}

function fileName(source) { return source.split("/").pop(); }

function citeButton(citation) {
  const button = el("button", `[${citation.n}]`, "cite");
  button.type = "button";
  button.addEventListener("click", () => openPassage(citation));
  return button;
}

function renderAnswer(result) {
  const box = $("answer");
  box.replaceChildren();
  const byNumber = new Map(result.citations.map((c) => [c.n, c]));
  // Split on [n] markers: text stays text; a known marker becomes a button that opens its passage.
  const parts = result.answer.split(/(\[\d+\]|\[unverified\]|\[未经核实\])/);
  for (const part of parts) {
    const m = /^\[(\d+)\]$/.exec(part);
    if (m && byNumber.has(Number(m[1]))) {
      box.appendChild(citeButton(byNumber.get(Number(m[1]))));
    } else if (part === "[unverified]" || part === "[未经核实]") {
      box.appendChild(el("span", part, "unverified"));
    } else {
      box.appendChild(document.createTextNode(part));
    }
  }
  renderVerdict(result);
  renderConflicts(result, byNumber);
  const list = $("citations");
  list.replaceChildren();
  for (const c of result.citations) {
    const item = el("li");
    item.appendChild(citeButton(c));
    item.appendChild(document.createTextNode(` ${fileName(c.source)}${c.page ? ` p.${c.page}` : ""}`));
    item.appendChild(el("span", `“${c.quote}”`, "quote"));
    list.appendChild(item);
  }
  const u = result.usage;
  $("meta").textContent = `${result.mode} · ${result.stop_reason} · ${u.llm_calls} LLM calls · ` +
    `${u.retrieval_calls} searches · ${u.ms} ms · trace ${result.trace_id}`;
  loadTrace(result.trace_id);
}

// How sure an answer is, in the words the CLI and the chat facade use (server/answer_text.py).
const CONFIDENCE = {
  high: "the passages answer the question",
  partial: "only part of the question is answered, or less precisely than asked",
  low: "the passages may not answer this",
};

function renderVerdict(result) {
  $("short-answer").textContent = result.short_answer || "";
  // A reply that looked nothing up (a greeting) has no evidence to rate.
  const rated = result.mode !== "direct" || result.citations.length > 0;
  const level = Object.hasOwn(CONFIDENCE, result.confidence) ? result.confidence : "low";
  const badge = $("confidence");
  badge.textContent = `${level} confidence`;
  badge.className = `badge ${level}`;
  badge.title = `Confidence ${level}: ${CONFIDENCE[level]}`;
  $("confidence-note").textContent = CONFIDENCE[level];
  $("confidence-box").hidden = !rated;
  $("verdict").hidden = !(rated || result.short_answer);
}

// Sources that disagree, newest first, the value in force marked: each side's value, file and date.
function renderConflicts(result, byNumber) {
  const box = $("conflicts");
  box.replaceChildren();
  for (const conflict of result.conflicts || []) {
    box.appendChild(el("h3", conflict.attribute ? `Sources disagree (${conflict.attribute})` : "Sources disagree"));
    const list = el("ul");
    let marked = false;
    for (const side of conflict.values) {
      const item = el("li");
      item.appendChild(el("span", side.value, "value"));
      item.appendChild(el("span", ` · ${fileName(side.source)}${side.date ? `, ${side.date}` : ""} `, "where"));
      if (byNumber.has(side.n)) item.appendChild(citeButton(byNumber.get(side.n)));
      if (!marked && conflict.current !== null && side.value === conflict.current) {
        item.appendChild(el("span", "in force", "in-force"));
        item.classList.add("current");
        marked = true;
      }
      list.appendChild(item);
    }
    box.appendChild(list);
  }
  box.hidden = box.childElementCount === 0;
}

async function openPassage(citation) {
  const chunk = await api(`/v1/kb/${encodeURIComponent(state.kb)}/chunks/${encodeURIComponent(citation.chunk_id)}`);
  $("passage-title").textContent = chunk.title || chunk.source;
  // The quoted sentence's page (a passage may start on the page before it).
  const page = citation.page || chunk.page;
  const where = [chunk.source, chunk.heading_path.join(" > "), page ? `p.${page}` : "", chunk.date || ""];
  $("passage-where").textContent = where.filter(Boolean).join(" · ");
  const box = $("passage-text");
  box.replaceChildren();
  const at = citation.quote ? chunk.text.indexOf(citation.quote) : -1;
  if (at >= 0) {
    box.appendChild(document.createTextNode(chunk.text.slice(0, at)));
    box.appendChild(el("mark", citation.quote));
    box.appendChild(document.createTextNode(chunk.text.slice(at + citation.quote.length)));
  } else {
    box.textContent = chunk.text;
  }
  $("passage").hidden = false;
  box.querySelector("mark")?.scrollIntoView({ block: "center" });
}

async function loadTrace(traceId) {
  const list = $("trace");
  list.replaceChildren();
  try {
    const data = await api(`/v1/kb/${encodeURIComponent(state.kb)}/traces/${traceId}`);
    for (const e of data.events) {
      list.appendChild(el("li", `${e.step}${e.round ? ` (round ${e.round})` : ""}: ${e.decision} ${e.reason} ${e.ms ? `· ${e.ms} ms` : ""}`));
    }
  } catch (error) { list.appendChild(el("li", error.message)); }
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || !state.kb) return;
  $("progress").replaceChildren();
  $("answer").replaceChildren();
  $("citations").replaceChildren();
  $("conflicts").replaceChildren();
  $("conflicts").hidden = true;
  $("verdict").hidden = true;
  $("meta").textContent = "";
  $("ask").disabled = true;
  try {
    const response = await fetch(`/v1/kb/${encodeURIComponent(state.kb)}/ask`, {
      method: "POST",
      headers: { Authorization: `Bearer ${state.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ question, mode: $("mode").value, preset: $("preset").value, stream: true }),
    });
    if (!response.ok) throw new Error(`${response.status}: ${(await response.json()).detail}`);
    let streamed = "";
    for await (const event of readEvents(response)) {
      if (event.name === "progress") $("progress").appendChild(el("li", event.data.message));
      else if (event.name === "token") { streamed += event.data.text; $("answer").textContent = streamed; }
      else if (event.name === "done") renderAnswer(event.data);
      else if (event.name === "error") status(event.data.detail);
    }
  } catch (error) { status(error.message); }
  finally { $("ask").disabled = false; }
}

async function newKb() {
  const name = prompt("Name of the new knowledge base (letters, digits, - _ .)");
  if (!name) return;
  try {
    await api("/v1/kb", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }) });
    state.kb = name;
    localStorage.setItem("agentrag-kb", name);
    await loadKbs();
  } catch (error) { status(error.message); }
}

$("key").value = state.key;
$("key").addEventListener("change", () => { state.key = $("key").value.trim(); localStorage.setItem("agentrag-key", state.key); loadKbs(); });
$("kb").addEventListener("change", () => { state.kb = $("kb").value; localStorage.setItem("agentrag-kb", state.kb); loadDocuments(); });
$("new-kb").addEventListener("click", newKb);
$("upload-form").addEventListener("submit", upload);
$("ask-form").addEventListener("submit", ask);
$("close-passage").addEventListener("click", () => { $("passage").hidden = true; });
loadKbs();
