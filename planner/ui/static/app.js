// The page: inputs → POST /api/*, and every change of the server's run ← /api/events (server-sent events).
"use strict";

const $ = id => document.getElementById(id);
let dirty = true;        // inputs changed since the last load
let loaded = false;
let chart = null;        // the server's chart spec of the loaded query
let columns = [];        // the loaded query's output columns (the chart's axes are named after them)
let history = [];        // per-batch points: latency, rate, chart value
let examples = [];
let shown = 0;           // the server's sequence number of what the page shows: older answers are stale

async function call(path, body) {
  const response = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                      body: body === undefined ? "{}" : JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) { showError(answer.error); return null; }
  return answer;
}

function inputs() {
  return {
    sql: $("sql").value, catalog: $("catalog").value, ddl: $("ddl").value, engine: $("engine").value,
    batch_size: Number($("batch-size").value), on_invalid: $("on-invalid").value,
    stream: {kind: $("stream").value, sf: Number($("sf").value), window: Number($("window").value) || null, lambda: Number($("lambda").value),
             events: Number($("events").value), path: $("path").value},
  };
}

async function ensureLoaded() {
  if (loaded && !dirty) return true;
  const answer = await call("/api/load", inputs());
  if (answer === null) { clearRun(); return false; }  // a failed load closed the server's run
  dirty = false;
  renderState(answer);
  return true;
}

// The error box holds the last failure (refused SQL, bad input, an engine error) and the quarantine.
function showError(error) {
  $("error-message").textContent = error ? `${error.kind === "refused" ? "SQL refused" : error.kind + " error"}: ${error.message}` : "";
  $("error").hidden = !$("error-message").textContent && !$("quarantine").textContent;
}

function renderProgress(event) {
  const text = event.batches === undefined ? "no query loaded"
    : `batch ${event.batch} of ${event.batches} · ${event.applied.toLocaleString()} of ${event.updates.toLocaleString()} updates`
      + (event.running ? " · running" : "");
  $("progress").textContent = text;
  $("progress").dataset.batch = event.batch === undefined ? "" : event.batch;
}

// The result table holds the result's rows only (a top-k view's table never more than k); the rows
// the last batch deleted are listed under it, struck through.
function renderTable(table, delta, batch) {
  const inserted = new Set((delta ? delta.inserted : []).map(row => JSON.stringify(row)));
  const head = `<tr>${table.columns.map(c => `<th>${escape(c)}</th>`).join("")}</tr>`;
  const current = table.rows.map(row =>
    `<tr class="current${inserted.has(JSON.stringify(row)) ? " inserted" : ""}">${row.map(v => `<td>${escape(v)}</td>`).join("")}</tr>`);
  const deleted = (delta ? delta.deleted : []).slice(0, 20).map(row =>
    `<tr class="deleted">${row.map(v => `<td>${escape(v)}</td>`).join("")}</tr>`);
  $("result-table").innerHTML = head + current.join("");
  $("result-table").dataset.batch = batch;
  $("deleted-table").innerHTML = deleted.length ? head + deleted.join("") : "";
  $("deleted-box").hidden = !deleted.length;
  const changes = delta ? ` · last change +${delta.inserted_count} −${delta.deleted_count}` : "";
  $("result-count").textContent = `(${table.total.toLocaleString()} rows` +
    (table.total > table.rows.length ? `, first ${table.rows.length} in ORDER BY` : "") + `${changes})`;
}

function escape(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

function renderStages(stages) {
  $("stages").innerHTML = "<tr><th>stage</th><th>keys</th><th>bytes (est.)</th><th>rows in</th><th>rows out</th></tr>" +
    stages.map(s => `<tr data-stage="${s.id}"><td>[${s.id}] ${escape(s.name)}</td><td>${s.keys.toLocaleString()}</td>` +
      `<td>${formatBytes(s.bytes)}</td><td>${s.rows_in.toLocaleString()}</td><td>${s.rows_out.toLocaleString()}</td></tr>`).join("");
  for (const s of stages) {
    const text = document.querySelector(`[data-metrics="${s.id}"]`);
    if (text) text.textContent = stageMetricsText(s);
  }
}

// The headline as `ivm explain` prints it: the strategy, the worst stages' cost, Spark's status.
function renderPlan(plan, stages) {
  const costs = plan.worst_update_costs.map(c => `${c.cost} (${c.stages.map(s => `[${s}]`).join(", ")})`).join("; ");
  $("strategy").textContent = `Strategy: ${plan.headline}\nUpdate cost (the worst stages): ${costs || "none: no stage"}`
    + (plan.spark_status ? `\nSpark: ${plan.spark_status}` : "");
  drawPlan($("plan"), plan.graph, Object.fromEntries(stages.map(s => [s.id, s])));
  $("refusals").innerHTML = Object.entries(plan.refusals)
    .map(([rule, why]) => `<li>Not applied: <b>${escape(rule)}</b>: ${escape(why)}</li>`).join("");
  $("rule-trace").innerHTML = "<tr><th>batch</th><th>iteration</th><th>rule</th><th>effective</th><th>ms</th></tr>" +
    plan.rule_trace.map(r => `<tr><td>${escape(r.batch)}</td><td>${r.iteration}</td><td>${escape(r.rule)}</td>` +
      `<td>${r.effective ? "yes" : ""}</td><td>${r.ms}</td></tr>`).join("");
}

function renderCharts(table) {
  if (chart.kind === "bars") drawBars($("chart"), table.chart.bars, chart.title, chart.labels.map(i => columns[i]).join(" · "));
  else if (chart.kind === "line") drawLines($("chart"), [{name: chart.title, cls: "value",
    points: history.map(p => ({batch: p.batch, value: p.value}))}], "no batch yet", chart.title);
  else $("chart").innerHTML = `<div class="chart-empty">${escape(chart.why)}</div>`;
  drawLines($("throughput"), [
    {name: "updates/s", cls: "rate", points: history.map(p => ({batch: p.batch, value: p.updates_per_s}))},
    {name: "batch latency ms", cls: "latency", points: history.map(p => ({batch: p.batch, value: p.latency_ms}))},
  ], "no batch yet", "updates/s, ms (each its own scale)");
}

// No run is loaded (a refused query, a failed load): nothing of the last run may stay on show.
function clearRun() {
  loaded = false;
  chart = null;
  columns = [];
  history = [];
  renderProgress({});
  for (const id of ["strategy", "result-count"]) $(id).textContent = "";
  for (const id of ["plan", "refusals", "rule-trace", "stages", "result-table", "deleted-table", "chart", "throughput"]) {
    $(id).innerHTML = "";
  }
  $("result-table").dataset.batch = "";
  $("deleted-box").hidden = true;
}

function renderCheck(check) {
  const box = $("check-result");
  box.className = !check ? "" : check.equal ? "equal" : "differs";
  if (!check) { box.textContent = ""; return; }
  let text = check.message;
  if (check.equal === false) {
    text += `\nmaintained only: ${JSON.stringify(check.maintained_only)}\nrecomputed only: ${JSON.stringify(check.recomputed_only)}`;
  }
  box.textContent = text;
}

function renderQuarantine(quarantine) {
  $("quarantine").textContent = !quarantine || !quarantine.count ? "" :
    `${quarantine.count} invalid updates quarantined; the last:\n` + quarantine.last.join("\n");
  $("error").hidden = !$("error-message").textContent && !$("quarantine").textContent;
}

// A whole state (on opening, after a load, after falling behind the event stream).
function renderState(state) {
  // A state fetched before a batch may arrive after that batch's event: it would show an older table.
  if (state.sequence < shown) return;
  shown = state.sequence;
  showError(state.error);
  renderCheck(state.check);
  if (!state.loaded) { clearRun(); renderQuarantine(null); return; }
  loaded = true;
  chart = state.chart;
  columns = state.columns;
  history = state.history.slice();
  renderProgress(state);
  renderPlan(state.plan, state.stages);
  renderStages(state.stages);
  renderTable(state.table, state.delta, state.batch);
  renderCharts(state.table);
  renderQuarantine(state.quarantine);
}

async function refresh() {
  const response = await fetch("/api/state");
  renderState(await response.json());
}

function onEvent(message) {
  const event = JSON.parse(message.data);
  if (event.type === "resync") shown = 0;  // the server restarted or the page fell behind: start over
  if (event.type === "resync" || event.type === "loaded") { refresh(); return; }
  const sequence = Number(message.lastEventId);
  if (sequence <= shown) return;  // already in the state shown
  shown = sequence;
  showError(event.error);
  renderCheck(event.check);
  if (event.batches === undefined) { clearRun(); renderQuarantine(null); return; }  // no run loaded
  if (!loaded) return;
  renderProgress(event);
  renderStages(event.stages);
  renderQuarantine(event.quarantine);
  if (!event.table) return;  // a status, a Check or an error: the last batch's table stays
  history.push(...event.points);
  renderTable(event.table, event.delta, event.batch);
  renderCharts(event.table);
}

function showStreamInputs() {
  const kind = $("stream").value;
  const visible = {tpch: ["window", "insert", "random", "lambda"].includes(kind), lambda: kind === "lambda", window: kind === "window",
                   events: kind === "orderbook" || kind === "r", path: kind === "path"};
  for (const [cls, show] of Object.entries(visible)) {
    for (const label of document.querySelectorAll(`label.${cls}`)) label.hidden = !show;
  }
  $("ddl").hidden = $("catalog").value !== "ddl";
}

// A page opened on a run already loaded shows that run's inputs, so Step goes on with it.
function showInputs(given) {
  $("sql").value = given.sql;
  $("catalog").value = given.catalog || "tpch";
  $("ddl").value = given.ddl || "";
  $("batch-size").value = given.batch_size;
  $("on-invalid").value = given.on_invalid || "quarantine";
  const stream = given.stream || {};
  $("stream").value = stream.kind || "window";
  for (const id of ["sf", "window", "lambda", "events", "path"]) {
    if (stream[id] !== undefined && stream[id] !== null) $(id).value = stream[id];
  }
  showStreamInputs();
}

function pickExample() {
  const example = examples[Number($("example").value)];
  if (!example) return;
  $("sql").value = example.sql;
  $("catalog").value = example.catalog;
  $("stream").value = example.stream;
  showStreamInputs();
  dirty = true;
}

async function start() {
  // Listening first: what somebody types while the options load is theirs, not overwritten below.
  let typed = false;
  for (const id of ["sql", "catalog", "ddl", "stream", "sf", "window", "lambda", "events", "path", "batch-size", "on-invalid", "engine"]) {
    $(id).addEventListener("input", () => { typed = true; dirty = true; showStreamInputs(); });
  }
  const options = await (await fetch("/api/options")).json();
  examples = options.examples;
  $("example").innerHTML = examples.map((e, i) => `<option value="${i}">${escape(e.name)}</option>`).join("");
  const q3 = examples.findIndex(e => e.name === "TPC-H Q03");
  $("example").value = String(Math.max(q3, 0));
  if (!typed) pickExample();
  $("example").addEventListener("change", pickExample);
  $("explain").onclick = () => { dirty = true; ensureLoaded(); };
  $("start").onclick = async () => { if (await ensureLoaded()) await call("/api/start"); };
  $("pause").onclick = () => call("/api/pause");
  $("step").onclick = async () => { if (await ensureLoaded()) await call("/api/step"); };
  $("reset").onclick = async () => { if (dirty) await ensureLoaded(); else await call("/api/reset"); };
  $("check").onclick = async () => {
    $("check-result").textContent = "recomputing…";
    $("check-result").className = "";
    const answer = await call("/api/check");
    if (answer) renderCheck(answer);
  };
  const response = await fetch("/api/state");
  const state = await response.json();
  if (state.loaded && !typed) showInputs(state.inputs);
  renderState(state);
  if (state.loaded && !typed) dirty = false;
  const events = new EventSource(`/api/events?after=${state.sequence}`);
  events.onmessage = onEvent;
  // Until here the page may still overwrite the inputs (the example, a loaded run's inputs) and
  // its buttons do nothing: tests and scripts wait for this mark before they type.
  document.body.dataset.ready = "true";
}

start();
