// agentrag web page. Every piece of document text goes into the page with textContent, never innerHTML:
// nothing inside a document can run here (and the Content-Security-Policy allows no inline script or style).
"use strict";

// ------------------------------------------------------------------ interface text (the one dictionary)

const STRINGS = {
  en: {
    apiKey: "API key", knowledgeBase: "Knowledge base", newKb: "New…", newKbPlaceholder: "Name (any script)",
    create: "Create", cancel: "Cancel", otherLanguage: "中文", languageTitle: "界面语言：中文",
    documents: "Documents", dropFiles: "Drop files here or choose several", uploads: "Uploads",
    clearFinished: "Clear finished", searchDocuments: "Search documents…", previous: "‹ Prev", next: "Next ›",
    docCount: "{from}–{to} of {total}", noDocuments: "No documents", noMatch: "No document matches “{q}”",
    chunks: "{n} chunks", chunks_one: "{n} chunk", deleteDoc: "Delete", confirmDelete: "Delete {title}?",
    ask: "Ask", questionPlaceholder: "Ask a question about your documents…", askButton: "Ask",
    newConversation: "New conversation", modeTitle: "mode", presetTitle: "budget preset",
    citedPassage: "Cited passage", close: "Close",
    enterKey: "Enter an API key (agentrag keys create)", noKb: "No knowledge base yet: create one with New…",
    queued: "queued", uploading: "uploading {pct}%", indexing: "indexing…", failed: "failed: {reason}",
    added: "added, {n} chunks", added_one: "added, {n} chunk", updated: "updated, {n} chunks", updated_one: "updated, {n} chunk", unchanged: "unchanged", dismiss: "Dismiss",
    networkError: "network error", confidence: "{level} confidence",
    level_high: "high", level_partial: "partial", level_low: "low",
    note_high: "the passages answer the question",
    note_partial: "only part of the question is answered, or less precisely than asked",
    note_low: "the passages may not answer this",
    notFound: "Not found: nothing in the knowledge base answers this question.",
    closest: "Closest passages (they do not answer it)",
    sourcesDisagree: "Sources disagree", sourcesDisagreeOn: "Sources disagree ({attribute})",
    value: "Value", source: "Source", date: "Date", inForce: "in force", sources: "Sources", trace: "Trace",
    llmCalls: "{n} LLM calls", tokens: "{n} tokens", searches: "{n} searches", round: "round {n}",
    page: "p.{n}", you: "You", steps: "{n} steps",
  },
  zh: {
    apiKey: "API 密钥", knowledgeBase: "知识库", newKb: "新建…", newKbPlaceholder: "名称（可用中文）",
    create: "创建", cancel: "取消", otherLanguage: "English", languageTitle: "Interface language: English",
    documents: "文档", dropFiles: "把文件拖到这里，或一次选择多个", uploads: "上传",
    clearFinished: "清除已完成", searchDocuments: "搜索文档…", previous: "‹ 上一页", next: "下一页 ›",
    docCount: "第 {from}–{to} 个，共 {total} 个", noDocuments: "还没有文档", noMatch: "没有文档匹配“{q}”",
    chunks: "{n} 个段落", deleteDoc: "删除", confirmDelete: "删除《{title}》？",
    ask: "提问", questionPlaceholder: "请输入关于文档的问题…", askButton: "提问",
    newConversation: "新对话", modeTitle: "模式", presetTitle: "预算档位",
    citedPassage: "引用的段落", close: "关闭",
    enterKey: "请输入 API 密钥（agentrag keys create）", noKb: "还没有知识库：点“新建…”创建一个",
    queued: "排队中", uploading: "上传中 {pct}%", indexing: "索引中…", failed: "失败：{reason}",
    added: "已添加，{n} 个段落", updated: "已更新，{n} 个段落", unchanged: "未变化", dismiss: "关闭",
    networkError: "网络错误", confidence: "可信度：{level}",
    level_high: "高", level_partial: "部分", level_low: "低",
    note_high: "段落回答了这个问题",
    note_partial: "只回答了问题的一部分，或不如所问的精确",
    note_low: "这些段落可能没有回答这个问题",
    notFound: "未找到：知识库中没有能回答这个问题的内容。",
    closest: "最接近的段落（并未回答这个问题）",
    sourcesDisagree: "各来源说法不一", sourcesDisagreeOn: "各来源说法不一（{attribute}）",
    value: "值", source: "来源", date: "日期", inForce: "现行", sources: "来源", trace: "执行过程",
    llmCalls: "{n} 次模型调用", tokens: "{n} 个 token", searches: "{n} 次检索", round: "第 {n} 轮",
    page: "第 {n} 页", you: "你", steps: "{n} 个步骤",
  },
};

function pickLanguage() {
  const saved = localStorage.getItem("agentrag-lang");
  if (saved && Object.hasOwn(STRINGS, saved)) return saved;
  return (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

let lang = pickLanguage();

function t(key, vars = {}) {
  const one = vars.n === 1 && Object.hasOwn(STRINGS[lang], `${key}_one`);  // "1 chunk", not "1 chunks"
  const text = STRINGS[lang][one ? `${key}_one` : key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (all, name) => (Object.hasOwn(vars, name) ? String(vars[name]) : all));
}

function applyStrings() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const node of document.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
  for (const node of document.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
}

// ------------------------------------------------------------------ page state and the API

const $ = (id) => document.getElementById(id);
const state = {
  key: localStorage.getItem("agentrag-key") || "",
  kb: localStorage.getItem("agentrag-kb") || "",
  kbs: [],
  docs: { q: "", offset: 0, total: 0, items: [], seq: 0 },
  uploads: [],
  conversationId: null,
  turns: [],
};
const PAGE_SIZE = 50;
const UPLOAD_CONCURRENCY = 3;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function status(text) { $("status").textContent = text; }

function kbPath(kb, suffix = "") { return `/v1/kb/${encodeURIComponent(kb)}${suffix}`; }

// The reason a request was refused, from the service's {"detail": ...}, with its status code.
function refusal(statusCode, body, fallback) {
  let detail = fallback;
  try { detail = JSON.parse(body).detail || detail; } catch (e) { /* not JSON */ }
  return `${statusCode}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`;
}

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: `Bearer ${state.key}` }, options.headers || {});
  const response = await fetch(path, Object.assign({}, options, { headers }));
  if (!response.ok) throw new Error(refusal(response.status, await response.text(), response.statusText));
  return response.status === 204 ? null : response.json();
}

function fileName(source) { return String(source || "").split("/").pop(); }

// ------------------------------------------------------------------ knowledge bases

function kbId(kb) { return kb.id || kb.name; }
function kbLabel(kb) { return kb.display_name || kb.name || kb.id; }

function renderKbs() {
  const select = $("kb");
  select.replaceChildren();
  for (const kb of state.kbs) {
    const count = typeof kb.documents === "number" ? ` (${kb.documents})` : "";
    const option = el("option", `${kbLabel(kb)}${count}`);
    option.value = kbId(kb);
    select.appendChild(option);
  }
  select.value = state.kb;
}

async function loadKbs() {
  if (!state.key) { status(t("enterKey")); return; }
  try {
    const data = await api("/v1/kb");
    state.kbs = data.knowledge_bases;
    if (!state.kbs.some((kb) => kbId(kb) === state.kb)) selectKb(state.kbs[0] ? kbId(state.kbs[0]) : "");
    renderKbs();
    status(state.kbs.length ? "" : t("noKb"));
    await loadDocuments();
  } catch (error) { status(error.message); }
}

function selectKb(id) {
  if (id !== state.kb) newConversation();
  state.kb = id;
  state.docs.offset = 0;
  localStorage.setItem("agentrag-kb", id);
}

async function createKb(event) {
  event.preventDefault();
  const name = $("new-kb-name").value.trim();
  if (!name) return;
  try {
    const made = await api("/v1/kb", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }),
    });
    selectKb(made.id || made.name || name);
    $("new-kb-form").hidden = true;
    $("new-kb-name").value = "";
    await loadKbs();
  } catch (error) { status(error.message); }
}

// ------------------------------------------------------------------ documents: search and paging

function docMatches(doc, q) {
  const words = [doc.title, doc.source, doc.file_name, ...Object.entries(doc.tags || {}).flat()];
  return words.some((w) => String(w || "").toLowerCase().includes(q));
}

async function loadDocuments() {
  const docs = state.docs;
  const seq = ++docs.seq;  // a slower, older answer must not overwrite the list asked for last
  if (!state.kb) { docs.items = []; docs.total = 0; renderDocuments(); return; }
  const query = new URLSearchParams({ offset: String(docs.offset), limit: String(PAGE_SIZE) });
  if (docs.q) query.set("q", docs.q);
  let data;
  try { data = await api(kbPath(state.kb, `/documents?${query}`)); } catch (error) { status(error.message); return; }
  if (seq !== docs.seq) return;
  let items = data.documents;
  if (typeof data.total === "number") {
    docs.total = data.total;
  } else {  // a service that lists every document: search and page here
    const q = docs.q.toLowerCase();
    const all = q ? items.filter((d) => docMatches(d, q)) : items;
    docs.total = all.length;
    items = all.slice(docs.offset, docs.offset + PAGE_SIZE);
  }
  docs.items = items;
  renderDocuments();
}

function tagChips(tags) {
  return Object.entries(tags || {}).map(([k, v]) => el("span", `${k}=${v}`, "tag"));
}

function renderDocument(doc) {
  const item = el("li");
  const text = el("div", null, "doc");
  const title = el("span", doc.title || fileName(doc.source), "doc-title");
  title.title = doc.source || "";
  text.appendChild(title);
  const date = doc.date || (doc.ingested_at ? new Date(doc.ingested_at * 1000).toISOString().slice(0, 10) : "");
  const chunks = doc.chunks ?? doc.n_chunks;
  const facts = [doc.file_name || fileName(doc.source), date, chunks !== undefined ? t("chunks", { n: chunks }) : ""];
  const line = text.appendChild(el("span", null, "doc-facts"));
  // A date or count never breaks inside; a long file name may.
  facts.forEach((fact, i) => fact && line.append(...(line.childNodes.length ? [" · "] : []), el("span", fact, i ? "fact" : "")));
  const chips = tagChips(doc.tags);
  if (chips.length) { const tags = el("span", null, "tags"); tags.append(...chips); text.appendChild(tags); }
  item.appendChild(text);
  const remove = el("button", t("deleteDoc"), "delete");
  remove.type = "button";
  remove.title = `${t("deleteDoc")} ${doc.source}`;
  remove.addEventListener("click", async () => {
    if (!confirm(t("confirmDelete", { title: doc.title }))) return;
    try {
      await api(kbPath(state.kb, `/documents/${encodeURIComponent(doc.doc_id)}`), { method: "DELETE" });
    } catch (error) { status(error.message); }
    await loadKbs();
  });
  item.appendChild(remove);
  return item;
}

function renderDocuments() {
  const { items, total, offset, q } = state.docs;
  $("documents").replaceChildren(...items.map(renderDocument));
  const empty = q ? t("noMatch", { q }) : t("noDocuments");
  $("doc-count").textContent = total ? t("docCount", { from: offset + 1, to: offset + items.length, total }) : empty;
  $("prev-page").disabled = offset === 0;
  $("next-page").disabled = offset + items.length >= total;
}

function page(step) {
  state.docs.offset = Math.max(0, state.docs.offset + step * PAGE_SIZE);
  loadDocuments();
}

let searchTimer = null;
function searchDocuments() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.docs.q = $("doc-search").value.trim();
    state.docs.offset = 0;
    loadDocuments();
  }, 250);
}

// ------------------------------------------------------------------ uploads: several at once, each with its line

// A refusal (415, 413, 422) stays in this list until dismissed: the document list reloads without touching it.
function addFiles(files) {
  for (const file of files) state.uploads.push({ file, kb: state.kb, status: "queued", pct: 0, result: null, error: "" });
  $("file").value = "";
  renderUploads();
  pumpUploads();
}

function pumpUploads() {
  const running = state.uploads.filter((u) => u.status === "uploading" || u.status === "indexing").length;
  const waiting = state.uploads.filter((u) => u.status === "queued");
  for (const entry of waiting.slice(0, Math.max(0, UPLOAD_CONCURRENCY - running))) sendUpload(entry);
}

function sendUpload(entry) {
  entry.status = "uploading";
  const xhr = new XMLHttpRequest();
  xhr.open("POST", kbPath(entry.kb, "/documents"));
  xhr.setRequestHeader("Authorization", `Bearer ${state.key}`);
  xhr.upload.addEventListener("progress", (e) => {
    if (!e.lengthComputable) return;
    entry.pct = Math.round((100 * e.loaded) / e.total);
    renderUploads();
  });
  // Sent: the service now reads and indexes it before it answers.
  xhr.upload.addEventListener("load", () => { entry.status = "indexing"; entry.pct = 100; renderUploads(); });
  xhr.addEventListener("load", () => {
    if (xhr.status >= 200 && xhr.status < 300) {
      entry.status = "done";
      entry.result = JSON.parse(xhr.responseText);
    } else {
      entry.status = "failed";
      entry.error = refusal(xhr.status, xhr.responseText, xhr.statusText);
    }
    uploadFinished(entry);
  });
  xhr.addEventListener("error", () => { entry.status = "failed"; entry.error = t("networkError"); uploadFinished(entry); });
  const form = new FormData();
  form.append("file", entry.file);
  xhr.send(form);
  renderUploads();
}

let reloadTimer = null;
function uploadFinished(entry) {
  renderUploads();
  pumpUploads();
  if (entry.status === "done" && entry.kb === state.kb) {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(loadKbs, 300);
  }
}

function uploadText(entry) {
  if (entry.status === "uploading") return t("uploading", { pct: entry.pct });
  if (entry.status === "failed") return t("failed", { reason: entry.error });
  if (entry.status === "done") return t(entry.result.status, { n: entry.result.chunks });
  return t(entry.status);
}

function renderUpload(entry) {
  const item = el("li", null, `upload ${entry.status}`);
  item.appendChild(el("span", entry.file.name, "upload-name"));
  item.appendChild(el("span", uploadText(entry), "upload-status"));
  if (entry.status === "uploading" || entry.status === "indexing") {
    const bar = el("progress");
    bar.max = 100;
    if (entry.status === "uploading") bar.value = entry.pct;  // indexing: no value, an indeterminate bar
    item.appendChild(bar);
  }
  if (entry.status === "failed" || entry.status === "done") {
    const dismiss = el("button", "×", "dismiss");
    dismiss.type = "button";
    dismiss.title = t("dismiss");
    dismiss.setAttribute("aria-label", `${t("dismiss")} ${entry.file.name}`);
    dismiss.addEventListener("click", () => { state.uploads = state.uploads.filter((u) => u !== entry); renderUploads(); });
    item.appendChild(dismiss);
  }
  return item;
}

function renderUploads() {
  $("uploads").replaceChildren(...state.uploads.map(renderUpload));
  $("clear-uploads").hidden = !state.uploads.some((u) => u.status === "done");
}

// ------------------------------------------------------------------ answer text: lists and tables as DOM nodes

const MARKERS = /(\[\d+\]|\[unverified\]|\[未经核实\])/;

// Text with its [n] markers as buttons that open the cited passage.
function inline(text, byNumber) {
  const nodes = [];
  for (const part of text.split(MARKERS)) {
    if (!part) continue;
    const m = /^\[(\d+)\]$/.exec(part);
    if (m && byNumber.has(Number(m[1]))) nodes.push(citeButton(byNumber.get(Number(m[1]))));
    else if (part === "[unverified]" || part === "[未经核实]") nodes.push(el("span", part, "unverified"));
    else nodes.push(document.createTextNode(part));
  }
  return nodes;
}

function pipeCells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

const isPipeRow = (line) => (line.match(/\|/g) || []).length >= 2 || /^\s*\|.*\|\s*$/.test(line);
const isRule = (line) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line);
const BULLET = /^\s*[-*•]\s+/;
const NUMBERED = /^\s*\d+[.)、]\s+/;

function table(header, rows, byNumber) {
  const node = el("table", null, "answer-table");
  if (header) {
    const tr = el("tr");
    for (const cell of header) tr.appendChild(el("th", cell));
    node.appendChild(el("thead")).appendChild(tr);
  }
  const body = node.appendChild(el("tbody"));
  for (const row of rows) {
    const tr = body.appendChild(el("tr"));
    for (const cell of row) tr.appendChild(el("td")).append(...inline(cell, byNumber));
  }
  return node;
}

// "Code: E1042, HTTP: 400, Meaning: …[3]." — a table row as the extractive answer writes it out, perhaps after a
// lead such as "据《…》（2024-12-20）：". Three or more "key: value" pairs, or it is a sentence. A key is a header's
// words: it starts with a letter or a digit and holds no brace or quote, so a sentence quoting JSON
// ('Errors return {"error": {"code": "...", "message": "..."}}') stays a sentence.
const KV_PAIR = /^([\p{L}\p{N}][^:：,，|[\]{}"“”]{0,29}): (.+)$/su;
function pairsOf(text) {
  const pairs = text.split(/，|, /).map((p) => KV_PAIR.exec(p.trim()));
  return pairs.length >= 3 && pairs.every(Boolean) ? pairs : null;
}

function keyValues(sentence) {
  const m = /^(.*?)((?:\[\d+\])+)[。.；;]?$/s.exec(sentence);
  const body = m ? m[1] : sentence;
  for (const colon of ["", "：", ": "]) {
    const at = colon ? body.indexOf(colon) : 0;
    if (at < 0) continue;
    const pairs = pairsOf(body.slice(at + colon.length));
    if (!pairs) continue;
    return {
      lead: body.slice(0, at).trim(), cites: m ? m[2] : "",
      keys: pairs.map((p) => p[1].trim()), values: pairs.map((p) => p[2].trim()),
    };
  }
  return null;
}

// A line as sentences, each ending at its citation markers ("…[1][2]。"); runs of key-value rows with the same
// keys become one table, the other sentences one paragraph between them.
const SENTENCE_END = /(?<=\[\d+\][。.；;!?！？]?)(?!\[\d+\]|[。.；;!?！？])/;
function renderLine(line, byNumber) {
  const nodes = [];
  let paragraph = null;
  let rows = [];
  const flushRows = () => {
    if (!rows.length) return;
    const withLead = rows.some((r) => r.lead);
    const header = [...(withLead ? [""] : []), ...rows[0].keys, ""];
    nodes.push(table(header, rows.map((r) => [...(withLead ? [r.lead] : []), ...r.values, r.cites]), byNumber));
    rows = [];
    paragraph = null;
  };
  for (const sentence of line.split(SENTENCE_END).filter(Boolean)) {
    const kv = keyValues(sentence.trim());
    if (kv) {
      if (rows.length && rows[0].keys.join("|") !== kv.keys.join("|")) flushRows();
      rows.push(kv);
      continue;
    }
    flushRows();
    if (!paragraph) nodes.push((paragraph = el("p", null, "answer-line")));
    paragraph.append(...inline(paragraph.childNodes.length ? sentence : sentence.trimStart(), byNumber));
  }
  flushRows();
  return nodes;
}

function renderText(answer, byNumber) {
  const lines = answer.split("\n");
  const nodes = [];
  for (let i = 0; i < lines.length;) {
    if (isPipeRow(lines[i]) && i + 1 < lines.length && (isPipeRow(lines[i + 1]) || isRule(lines[i + 1]))) {
      const block = [];
      while (i < lines.length && (isPipeRow(lines[i]) || isRule(lines[i]))) block.push(lines[i++]);
      const rows = block.filter((l) => !isRule(l)).map(pipeCells);
      const headed = block.length > 1 && isRule(block[1]);
      nodes.push(headed ? table(rows[0], rows.slice(1), byNumber) : table(null, rows, byNumber));
    } else if (BULLET.test(lines[i]) || NUMBERED.test(lines[i])) {
      const marker = BULLET.test(lines[i]) ? BULLET : NUMBERED;
      const list = el(marker === BULLET ? "ul" : "ol", null, "answer-list");
      while (i < lines.length && marker.test(lines[i])) {
        list.appendChild(el("li")).append(...inline(lines[i++].replace(marker, ""), byNumber));
      }
      nodes.push(list);
    } else {
      if (lines[i].trim()) nodes.push(...renderLine(lines[i], byNumber));
      i++;
    }
  }
  return nodes;
}

// ------------------------------------------------------------------ one turn of the conversation

function citeButton(citation) {
  const button = el("button", `[${citation.n}]`, "cite");
  button.type = "button";
  button.addEventListener("click", () => openPassage(citation));
  return button;
}

// The extractive answer's own lead when nothing answers: "Nothing in the knowledge base…" / "知识库中没有…".
const NOT_FOUND_LEAD = /^(Nothing in the knowledge base|知识库中没有)/;

function isNotFound(result) {
  return result.stop_reason === "no_evidence" ||
    (result.confidence === "low" && NOT_FOUND_LEAD.test(result.answer.trimStart()));
}

function verdict(result) {
  const box = el("div", null, "verdict");
  if (result.short_answer) box.appendChild(el("p", result.short_answer, "short-answer"));
  // A reply that looked nothing up (a greeting) has no evidence to rate.
  if (result.mode !== "direct" || result.citations.length > 0) {
    const level = ["high", "partial", "low"].includes(result.confidence) ? result.confidence : "low";
    const line = el("p", null, "confidence-box");
    const badge = el("span", t("confidence", { level: t(`level_${level}`) }), `badge ${level}`);
    badge.title = t(`note_${level}`);
    line.append(badge, " ", el("span", t(`note_${level}`), "confidence-note"));
    box.appendChild(line);
  }
  return box;
}

// Sources that disagree, newest first: each side's value, file and date, the value in force marked once.
function conflicts(result, byNumber) {
  const box = el("section", null, "conflicts");
  for (const conflict of result.conflicts || []) {
    box.appendChild(el("h3", conflict.attribute ? t("sourcesDisagreeOn", { attribute: conflict.attribute }) : t("sourcesDisagree")));
    const rows = el("tbody");
    let marked = false;
    for (const side of conflict.values) {
      const tr = rows.appendChild(el("tr"));
      tr.appendChild(el("td", side.value, "value"));
      const where = tr.appendChild(el("td", `${fileName(side.source)} `));
      if (byNumber.has(side.n)) where.appendChild(citeButton(byNumber.get(side.n)));
      tr.appendChild(el("td", side.date || ""));
      const current = !marked && conflict.current !== null && side.value === conflict.current;
      tr.appendChild(el("td")).appendChild(current ? el("span", t("inForce"), "in-force") : document.createTextNode(""));
      if (current) { tr.classList.add("current"); marked = true; }
    }
    const grid = el("table");
    const head = grid.appendChild(el("thead")).appendChild(el("tr"));
    for (const key of ["value", "source", "date", "inForce"]) head.appendChild(el("th", t(key)));
    grid.appendChild(rows);
    box.appendChild(grid);
  }
  return box.childElementCount ? box : null;
}

// One numbered list: each source's number is its [n] marker (the list itself draws no numbers).
function citationList(result) {
  const list = el("ol", null, "citations");
  list.setAttribute("aria-label", t("sources"));
  for (const c of result.citations) {
    const item = el("li");
    item.appendChild(citeButton(c));
    const file = fileName(c.source);
    const where = [c.title && c.title !== file ? c.title : "", file];
    const heading = Array.isArray(c.heading_path) ? c.heading_path.join(" › ") : c.heading || "";
    if (heading) where.push(heading);
    if (c.page) where.push(t("page", { n: c.page }));
    item.appendChild(el("span", ` ${where.filter(Boolean).join(" · ")}`, "where"));
    item.appendChild(el("span", `“${String(c.quote).replace(/\s+/g, " ").trim()}”`, "quote"));
    list.appendChild(item);
  }
  return list;
}

function metaLine(result) {
  const u = result.usage || {};
  const tokens = (u.prompt_tokens || 0) + (u.completion_tokens || 0);
  const parts = [result.mode, result.stop_reason, t("llmCalls", { n: u.llm_calls ?? 0 })];
  if (tokens) parts.push(t("tokens", { n: tokens }));
  parts.push(t("searches", { n: u.retrieval_calls ?? 0 }), `${u.ms ?? 0} ms`, `trace ${result.trace_id}`);
  return el("p", parts.join(" · "), "meta");
}

function traceBox(turn) {
  const box = el("details", null, "trace-box");
  box.appendChild(el("summary", t("trace")));
  const list = box.appendChild(el("ol", null, "trace"));
  box.addEventListener("toggle", async () => {
    if (!box.open || list.childElementCount) return;
    try {
      const data = await api(kbPath(turn.kb, `/traces/${encodeURIComponent(turn.result.trace_id)}`));
      for (const e of data.events) {
        const round = e.round ? ` (${t("round", { n: e.round })})` : "";
        list.appendChild(el("li", `${e.step}${round}: ${e.decision} ${e.reason}${e.ms ? ` · ${e.ms} ms` : ""}`));
      }
    } catch (error) { list.appendChild(el("li", error.message)); }
  });
  return box;
}

function renderResult(turn, box) {
  const result = turn.result;
  const byNumber = new Map(result.citations.map((c) => [c.n, c]));
  box.appendChild(verdict(result));
  const disagree = conflicts(result, byNumber);
  if (isNotFound(result)) {
    // Say so plainly; what was closest stays folded away, marked as not an answer.
    box.appendChild(el("p", t("notFound"), "not-found"));
    const lines = result.answer.split("\n");
    const rest = NOT_FOUND_LEAD.test(lines[0].trimStart()) ? lines.slice(1).join("\n") : result.answer;
    const closest = el("details", null, "closest");
    closest.appendChild(el("summary", t("closest")));
    const text = closest.appendChild(el("div", null, "answer"));
    text.append(...renderText(rest, byNumber));
    closest.appendChild(citationList(result));
    if (rest.trim() || result.citations.length) box.appendChild(closest);
  } else {
    if (disagree) box.appendChild(disagree);
    box.appendChild(el("div", null, "answer")).append(...renderText(result.answer, byNumber));
    if (result.citations.length) box.appendChild(citationList(result));
  }
  box.appendChild(metaLine(result));
  box.appendChild(traceBox(turn));
}

function renderTurn(turn) {
  const node = el("article", null, "turn");
  const question = node.appendChild(el("p", null, "question"));
  question.append(el("span", t("you"), "who"), el("span", turn.question));
  const progress = el("ol", null, "progress");
  for (const message of turn.progress) progress.appendChild(el("li", message));
  if (turn.result) {  // answered: the steps fold away under one line
    const steps = node.appendChild(el("details", null, "steps"));
    steps.append(el("summary", t("steps", { n: turn.progress.length })), progress);
  } else {
    node.appendChild(progress);
  }
  if (turn.result) renderResult(turn, node);
  else if (turn.error) node.appendChild(el("p", turn.error, "error"));
  else node.appendChild(el("div", turn.streamed, "answer streaming"));
  return node;
}

function renderConversation() {
  $("conversation").replaceChildren(...state.turns.map(renderTurn));
}

// Redraw only the turn being answered (earlier turns keep their open passages and traces).
function redrawTurn(turn) {
  const nodes = $("conversation").children;
  const at = state.turns.indexOf(turn);
  if (at >= 0 && nodes[at]) nodes[at].replaceWith(renderTurn(turn));
  else renderConversation();
}

function newConversation() {
  state.conversationId = null;
  state.turns = [];
  if ($("conversation")) renderConversation();
}

function conversationId() {
  if (!state.conversationId) {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    state.conversationId = `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }
  return state.conversationId;
}

// ------------------------------------------------------------------ the passage viewer

async function openPassage(citation) {
  let chunk;
  try { chunk = await api(kbPath(state.kb, `/chunks/${encodeURIComponent(citation.chunk_id)}`)); } catch (error) { status(error.message); return; }
  $("passage-title").textContent = chunk.title || chunk.source;
  // The quoted sentence's page (a passage may start on the page before it).
  const pageNo = citation.page || chunk.page;
  const where = [chunk.source, chunk.heading_path.join(" > "), pageNo ? t("page", { n: pageNo }) : "", chunk.date || ""];
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

// ------------------------------------------------------------------ asking: server-sent events over fetch

// EventSource cannot POST or send a key.
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

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question || !state.kb) return;
  const turn = { question, kb: state.kb, progress: [], streamed: "", result: null, error: "" };
  state.turns.push(turn);
  $("conversation").appendChild(renderTurn(turn));
  $("question").value = "";
  $("ask").disabled = true;
  const body = { question, mode: $("mode").value, preset: $("preset").value, stream: true, conversation_id: conversationId() };
  try {
    const response = await fetch(kbPath(turn.kb, "/ask"), {
      method: "POST",
      headers: { Authorization: `Bearer ${state.key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(refusal(response.status, await response.text(), response.statusText));
    for await (const e of readEvents(response)) {
      if (e.name === "progress" && e.data.message) turn.progress.push(e.data.message);  // model calls have none
      else if (e.name === "token") turn.streamed += e.data.text;
      else if (e.name === "done") turn.result = e.data;
      else if (e.name === "error") turn.error = e.data.detail;
      else continue;
      redrawTurn(turn);
    }
    // The service may name the conversation itself; follow-ups then use its id.
    if (turn.result?.conversation_id && turn.kb === state.kb) state.conversationId = turn.result.conversation_id;
  } catch (error) {
    turn.error = error.message;
    redrawTurn(turn);
  } finally { $("ask").disabled = false; }
}

// ------------------------------------------------------------------ wiring

function setLanguage(next) {
  lang = next;
  localStorage.setItem("agentrag-lang", lang);
  applyStrings();
  renderDocuments();
  renderUploads();
  renderConversation();
  if (!state.key) status(t("enterKey"));
}

function wire() {
  $("key").value = state.key;
  $("key").addEventListener("change", () => {
    state.key = $("key").value.trim();
    localStorage.setItem("agentrag-key", state.key);
    loadKbs();
  });
  $("kb").addEventListener("change", () => { selectKb($("kb").value); loadDocuments(); });
  $("new-kb").addEventListener("click", () => { $("new-kb-form").hidden = false; $("new-kb-name").focus(); });
  $("new-kb-cancel").addEventListener("click", () => { $("new-kb-form").hidden = true; });
  $("new-kb-form").addEventListener("submit", createKb);
  $("lang").addEventListener("click", () => setLanguage(lang === "zh" ? "en" : "zh"));
  $("file").addEventListener("change", () => addFiles([...$("file").files]));
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); addFiles([...e.dataTransfer.files]); });
  $("clear-uploads").addEventListener("click", () => {
    state.uploads = state.uploads.filter((u) => u.status !== "done");
    renderUploads();
  });
  $("doc-search").addEventListener("input", searchDocuments);
  $("prev-page").addEventListener("click", () => page(-1));
  $("next-page").addEventListener("click", () => page(1));
  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("ask-form").requestSubmit(); }
  });
  $("new-conversation").addEventListener("click", newConversation);
  $("close-passage").addEventListener("click", () => { $("passage").hidden = true; });
}

applyStrings();
wire();
renderDocuments();
loadKbs();
