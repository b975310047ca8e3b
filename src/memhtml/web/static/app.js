// memhtml serve: as-you-type search, changes through the tools, and the live notice.
// Served from the app's own origin (the only script its Content-Security-Policy
// allows). Text from the store is only ever set as textContent, never as markup.
"use strict";

const csrf = () => document.querySelector('meta[name="memhtml-csrf"]').content;

async function post(url, args) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Memhtml-Csrf": csrf() },
    body: JSON.stringify(args),
    credentials: "same-origin",
  });
  let answer;
  try { answer = await response.json(); }
  catch (e) { answer = { ok: false, code: "ERR_REFUSED", error: await response.text() }; }
  return answer;
}
const callTool = (name, args) => post("/api/tool/" + encodeURIComponent(name), args);
const callDoor = (name, args) => post("/api/door/" + encodeURIComponent(name), args);
window.memhtml = { callTool, callDoor };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) {
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

const memoryUrl = (path) => "/memory/" + path.split("/").map(encodeURIComponent).join("/");

function renderHits(box, answer) {
  box.replaceChildren();
  if (!answer.ok) {
    box.append(el("p", { class: "error", role: "alert" }, answer.error));
    return;
  }
  const result = answer.result;
  let line = result.mode + " search";
  if (result.note) line += ": " + result.note;
  if (result.when && result.when.phrase) {
    line += " · read \u201c" + result.when.phrase + "\u201d as " + result.when.start + " to " + result.when.end;
  }
  box.append(el("p", { class: "explain" }, line));
  if (!result.hits.length) { box.append(el("p", {}, "No memory matches.")); return; }
  const list = el("ol", { class: "hits" });
  for (const hit of result.hits) {
    const why = el("p", { class: "why" }, "found by ");
    hit.ranks.forEach((rank, i) => {
      if (i) why.append(", ");
      why.append(el("span", { class: "arm", "data-arm": rank.arm },
        rank.arm + " #" + rank.rank + " (" + Number(rank.score).toFixed(3) + ")"));
    });
    if (hit.arms.includes("recency")) why.append(", ", el("span", { class: "arm" }, "recency broke a tie"));
    if (hit.arms.includes("time")) why.append(", ", el("span", { class: "arm" }, "the time the query names"));
    why.append(" · fused " + Number(hit.score).toFixed(4));
    list.append(el("li", { class: "hit" },
      el("h3", {}, el("a", { href: memoryUrl(hit.path) }, hit.title)),
      el("p", { class: "claim" }, hit.claim),
      el("p", { class: "facts" }, hit.type + " · " + hit.status + " · ", el("code", {}, hit.path)),
      why));
  }
  box.append(list);
}

function searchAsYouType() {
  const form = document.getElementById("search");
  const box = document.getElementById("results");
  if (!form || !box) return;
  let timer = null;
  let asked = 0;
  const run = async () => {
    const data = new FormData(form);
    const query = (data.get("q") || "").trim();
    const url = new URL(window.location.href);
    for (const [key, value] of data.entries()) {
      if (value) url.searchParams.set(key, value); else url.searchParams.delete(key);
    }
    history.replaceState(null, "", url);
    if (!query) { box.replaceChildren(); return; }
    const args = { query, limit: 20 };
    for (const key of ["type", "entity", "tag"]) if (data.get(key)) args[key] = [data.get(key)];
    for (const key of ["prefix", "as_of"]) if (data.get(key)) args[key] = data.get(key);
    const mine = ++asked;
    const answer = await callTool("memory_search", args);
    if (mine === asked) renderHits(box, answer);  // a slower, older answer never wins
  };
  form.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 150); });
  form.addEventListener("submit", (event) => { event.preventDefault(); clearTimeout(timer); run(); });
}

// A form with data-tool (an MCP tool), data-door (unlink, unlabel, move) or data-sleep
// (merge, abort, reject: a run) is sent as
// that call's arguments: each named field, empty ones left out, a data-array field as
// a list, the ticked data-collect checkboxes of one name as a list of their values.
// data-after: "goto" opens the memory the answer names (its data-goto field, "path"
// unless told), "href" the form's data-href, "reload" this page.
function edits() {
  for (const form of document.querySelectorAll("form[data-tool], form[data-door], form[data-sleep]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const args = {};
      for (const field of form.querySelectorAll("input[name], select[name], textarea[name]")) {
        if (field.type === "checkbox" && field.hasAttribute("data-collect")) {
          if (field.checked) (args[field.name] = args[field.name] || []).push(field.value);
          continue;
        }
        if (field.type === "checkbox") {
          if (field.checked || field.hasAttribute("data-bool")) args[field.name] = field.checked;
          continue;
        }
        const value = field.value.trim();
        if (!value) continue;
        args[field.name] = field.hasAttribute("data-array") ? [value] : value;
      }
      const shown = form.querySelector(".error");
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      const answer = form.dataset.tool ? await callTool(form.dataset.tool, args)
        : form.dataset.door ? await callDoor(form.dataset.door, args)
        : await post("/api/sleep/" + encodeURIComponent(form.dataset.sleep), args);
      button.disabled = false;
      if (!answer.ok) {
        shown.textContent = answer.code + ": " + answer.error;
        shown.hidden = false;
        return;
      }
      shown.hidden = true;
      const result = answer.result || {};
      const went = result[form.dataset.goto || "path"];
      if (form.dataset.after === "show") {
        const shown = form.querySelector(".answer");
        shown.textContent = describePlan(result);
        shown.hidden = false;
        return;
      }
      if (form.dataset.after === "progress") { followRun(); return; }
      if (form.dataset.after === "goto" && went) window.location.assign(memoryUrl(went));
      else if (form.dataset.after === "sleep") window.location.assign("/sleep");
      else if (form.dataset.after === "href") window.location.assign(form.dataset.href);
      else window.location.reload();
    });
  }
}

function describePlan(plan) {
  const parts = [plan.verdict, plan.changed_since_last_run + " changed since the last run",
    plan.transcripts_waiting + " transcripts waiting", plan.dangling_links + " dangling links"];
  return parts.concat(plan.notes || []).join(" · ");
}

// The run this app started: its progress lines every second until it ends, then
// the page again, with the new run in its list.
async function followRun() {
  const panel = document.getElementById("sleep-progress");
  if (!panel) return;
  panel.hidden = false;
  const shown = panel.querySelector("pre");
  for (;;) {
    const response = await fetch("/api/sleep/progress", { credentials: "same-origin" });
    const state = await response.json();
    shown.textContent = state.lines.join("\n") + (state.summary ? "\n\n" + state.summary : "");
    if (!state.running) {
      panel.dataset.done = String(state.code);
      if (state.code === 0) window.location.reload();
      return;
    }
    await new Promise((done) => setTimeout(done, 1000));
  }
}

function live() {
  const tip = document.querySelector('meta[name="memhtml-tip"]').content;
  const notice = document.getElementById("live");
  if (!window.EventSource || !notice) return;
  const source = new EventSource("/events");
  source.addEventListener("tip", (event) => {
    document.body.dataset.liveTip = event.data;  // the tip the server last named
    if (event.data !== tip) {
      notice.hidden = false;
      notice.dataset.tip = event.data;
      document.body.dataset.stale = "true";
    }
  });
  notice.querySelector("a").addEventListener("click", (event) => {
    event.preventDefault();
    window.location.reload();
  });
}

document.addEventListener("DOMContentLoaded", async () => {
  searchAsYouType(); edits(); live();
  // A run started earlier and still going: follow it on this page too.
  if (document.getElementById("sleep-progress")) {
    const state = await (await fetch("/api/sleep/progress", { credentials: "same-origin" })).json();
    if (state.running) followRun();
  }
});
