// Small hand-written SVG drawings for the page: the plan graph, bars, and lines over batches.
// No library: the page must work with no network, and these three pictures need ~150 lines.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgElement(name, attributes, text) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function clip(text, length) {
  text = String(text);
  return text.length > length ? text.slice(0, length - 1) + "…" : text;
}

// The plan graph: nodes placed by the server's layer/row, edges as curves, stage metrics inside nodes.
function drawPlan(container, graph, stagesById) {
  const width = 250, height = 84, gapX = 70, gapY = 14;
  const layers = Math.max(...graph.nodes.map(n => n.layer)) + 1;
  const rows = Math.max(...graph.nodes.map(n => n.row)) + 1;
  const fullWidth = layers * (width + gapX), fullHeight = rows * (height + gapY) + 10;
  const svg = svgElement("svg", {viewBox: `0 0 ${fullWidth} ${fullHeight}`, width: fullWidth, height: fullHeight,
                                 "data-testid": "plan-graph"});
  const defs = svgElement("defs");
  const marker = svgElement("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7,
                                       markerHeight: 7, orient: "auto-start-reverse"});
  marker.appendChild(svgElement("path", {d: "M0,0 L10,5 L0,10 z", fill: "#8894a5"}));
  defs.appendChild(marker);
  svg.appendChild(defs);
  const place = {};
  for (const node of graph.nodes) {
    place[node.id] = {x: node.layer * (width + gapX) + 4, y: node.row * (height + gapY) + 6};
  }
  for (const edge of graph.edges) {
    const a = place[edge.from], b = place[edge.to];
    const x1 = a.x + width, y1 = a.y + height / 2, x2 = b.x, y2 = b.y + height / 2, mid = (x1 + x2) / 2;
    svg.appendChild(svgElement("path", {class: "edge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`}));
    if (edge.label) {
      const label = svgElement("text", {class: "edge-label", x: x1 + 2, y: y1 - 3}, clip(edge.label, 40));
      label.appendChild(svgElement("title", {}, edge.label));
      svg.appendChild(label);
    }
  }
  for (const node of graph.nodes) {
    const {x, y} = place[node.id];
    const group = svgElement("g", {class: `node ${node.kind}`, "data-node": node.id,
                                   "data-stage-name": node.kind === "stage" ? node.label : ""});
    group.appendChild(svgElement("rect", {x, y, width, height}));
    const lines = node.kind === "stage"
      ? [[node.operator, "title"], [node.label, ""], [`key ${node.key}`, ""], [`cost ${node.update_cost}`, ""]]
      : [[node.label, "title"], [node.detail || "", ""]];
    lines.forEach(([text, cls], i) => {
      group.appendChild(svgElement("text", {x: x + 6, y: y + 15 + i * 14, class: cls}, clip(text, 42)));
    });
    if (node.kind === "stage") {
      const metrics = stagesById[node.stage];
      group.appendChild(svgElement("text", {x: x + 6, y: y + height - 8, class: "metrics",
                                            "data-metrics": node.stage}, metrics ? stageMetricsText(metrics) : ""));
    }
    const tip = node.kind === "stage"
      ? `${node.label}\noperator: ${node.operator}\nkey: ${node.key}\nstate: ${node.state}\nupdate cost: ${node.update_cost}\nwhy: ${node.why}`
      : `${node.label}${node.detail ? "\n" + node.detail : ""}`;
    group.appendChild(svgElement("title", {}, tip));
    svg.appendChild(group);
  }
  container.replaceChildren(svg);
}

function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "?";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function stageMetricsText(stage) {
  return `${stage.keys} keys ≈${formatBytes(stage.bytes)} · in ${stage.rows_in} out ${stage.rows_out}`;
}

// Horizontal bars: one per row of the result's first rows, labelled by the other columns; the axes
// are named: the labels' columns above them, the value's column under the bars.
function drawBars(container, bars, title, labelsTitle) {
  const shown = bars.filter(b => b.value !== null);
  if (!shown.length) { container.innerHTML = '<div class="chart-empty">no rows yet</div>'; return; }
  const rowHeight = 16, labelWidth = 210, width = 600, bottom = 16 + shown.length * rowHeight;
  const max = Math.max(...shown.map(b => Math.abs(b.value))) || 1;
  const svg = svgElement("svg", {viewBox: `0 0 ${width} ${bottom + 22}`});
  svg.appendChild(svgElement("text", {x: 0, y: 10, class: "axis-label", "data-axis": "y"}, clip(labelsTitle || "row", 100)));
  svg.appendChild(svgElement("line", {class: "axis", x1: labelWidth, y1: bottom + 2, x2: width - 10, y2: bottom + 2}));
  svg.appendChild(svgElement("text", {x: labelWidth, y: bottom + 16, class: "axis-label", "data-axis": "x"},
                             `${title} (0 … ${max.toLocaleString()}) · the first ${shown.length} rows in ORDER BY`));
  shown.forEach((bar, i) => {
    const y = 16 + i * rowHeight, length = Math.abs(bar.value) / max * (width - labelWidth - 90);
    svg.appendChild(svgElement("text", {x: 0, y: y + 11}, clip(bar.label, 34)));
    svg.appendChild(svgElement("rect", {class: "bar", x: labelWidth, y: y + 2, width: Math.max(length, 1), height: rowHeight - 4}));
    svg.appendChild(svgElement("text", {x: labelWidth + length + 4, y: y + 11}, bar.value.toLocaleString()));
  });
  container.replaceChildren(svg);
}

// Lines over batches: each series is [{batch, value}], drawn on its own scale (the legend gives its
// range); the x axis is the batch number, the y axis named by ``yTitle``.
function drawLines(container, series, emptyText, yTitle) {
  const points = series.flatMap(s => s.points).filter(p => p.value !== null && p.value !== undefined);
  if (!points.length) { container.innerHTML = `<div class="chart-empty">${emptyText}</div>`; return; }
  const width = 600, height = 150, left = 8, top = 14 * series.length + 6, bottom = 18;
  const svg = svgElement("svg", {viewBox: `0 0 ${width} ${height + top}`});
  const batches = points.map(p => p.batch);
  const minBatch = Math.min(...batches), maxBatch = Math.max(...batches);
  const x = b => left + (maxBatch === minBatch ? 0 : (b - minBatch) / (maxBatch - minBatch)) * (width - left - 10);
  svg.appendChild(svgElement("line", {class: "axis", x1: left, y1: height + top - bottom, x2: width, y2: height + top - bottom}));
  svg.appendChild(svgElement("line", {class: "axis", x1: left, y1: top, x2: left, y2: height + top - bottom}));
  svg.appendChild(svgElement("text", {x: width - 120, y: height + top - 4, class: "axis-label", "data-axis": "x"},
                             `batch ${minBatch}…${maxBatch}`));
  svg.appendChild(svgElement("text", {x: left + 4, y: height + top - 4, class: "axis-label", "data-axis": "y"}, `↑ ${yTitle}`));
  series.forEach((s, i) => {
    const values = s.points.filter(p => p.value !== null && p.value !== undefined);
    if (!values.length) return;
    const lo = Math.min(...values.map(p => p.value)), hi = Math.max(...values.map(p => p.value));
    const y = v => top + (hi === lo ? 0.5 : 1 - (v - lo) / (hi - lo)) * (height - bottom - 6);
    const path = values.map((p, j) => `${j ? "L" : "M"}${x(p.batch).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
    svg.appendChild(svgElement("path", {class: `line ${s.cls}`, d: path}));
    const last = values[values.length - 1].value;
    svg.appendChild(svgElement("circle", {class: s.cls, r: 2.5, cx: x(values[values.length - 1].batch), cy: y(last)}));
    svg.appendChild(svgElement("text", {x: left, y: 11 + i * 14, class: s.cls},
      `${s.name}: last ${last.toLocaleString()} (range ${lo.toLocaleString()} … ${hi.toLocaleString()})`));
  });
  container.replaceChildren(svg);
}
